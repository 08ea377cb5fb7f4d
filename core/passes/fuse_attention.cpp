#include "core/passes/fuse_attention.hpp"

#include <cmath>

#include "core/passes/rewrite.hpp"

namespace rungs::passes {

using ir::Node;
using ir::Op;

namespace {

using Perm = std::vector<int64_t>;

bool is_transpose(const Node& n, const Perm& perm) { return n.op == Op::Transpose && n.ints == perm; }

// The scores before scaling, and the scale: s * c, c * s, s / c with c a one-element constant.
// Returns {scores, scale}; scores == id (scale 1) when there is no scaling step.
std::pair<uint32_t, std::optional<float>> unscale(const Rewriter& rw, uint32_t id) {
  const Node& n = rw.node(id);
  const ir::GraphImpl& g = rw.graph();
  if (n.op == Op::Mul)
    for (int k = 0; k < 2; ++k)
      if (auto c = scalar_constant(g, n.in[k]); c && rw.node(n.in[1 - k]).shape == n.shape)
        return {n.in[1 - k], *c};
  if (n.op == Op::Div)
    if (auto c = scalar_constant(g, n.in[1]); c && *c != 0.f && rw.node(n.in[0]).shape == n.shape)
      return {n.in[0], 1.f / *c};
  return {id, 1.f};
}

class Rank4 {
 public:
  explicit Rank4(Rewriter& rw) : rw_(rw) {}

  // [B, S, H, D] -> [B, S, H*D]: reuses the graph's own tensor when r reshaped one.
  uint32_t merge_heads(uint32_t r) {
    Shape s = rw_.node(r).shape;
    Shape want{s[0], s[1], s[2] * s[3]};
    const Node& n = rw_.node(r);
    if (n.op == Op::Reshape && rw_.node(n.in[0]).shape == want) return n.in[0];
    return append_reshape(r, want);
  }
  // [B, H, S, D] -> [B, S, H*D]: skips a transpose that only undoes the graph's own head split.
  uint32_t from_bhsd(uint32_t x) {
    const Node& n = rw_.node(x);
    if (is_transpose(n, {0, 2, 1, 3})) return merge_heads(n.in[0]);
    Shape s = n.shape;
    Node t;
    t.op = Op::Transpose;
    t.in = {x};
    t.ints = {0, 2, 1, 3};
    t.shape = {s[0], s[2], s[1], s[3]};
    return merge_heads(rw_.append(std::move(t)));
  }
  uint32_t append_reshape(uint32_t x, Shape shape) {
    Node r;
    r.op = Op::Reshape;
    r.in = {x};
    r.shape = std::move(shape);
    return rw_.append(std::move(r));
  }

 private:
  Rewriter& rw_;
};

}  // namespace

bool fuse_attention(ir::GraphImpl& g) {
  Rewriter rw(g);
  const uint32_t count = static_cast<uint32_t>(g.nodes.size());
  for (uint32_t root = 0; root < count; ++root) {
    if (g.nodes[root].op != Op::MatMul) continue;
    const uint32_t p = g.nodes[root].in[0], v = g.nodes[root].in[1];
    const size_t rank = g.nodes[p].shape.size();
    if (g.nodes[p].op != Op::Softmax || rw.sole_consumer(p) != root || (rank != 3 && rank != 4)) continue;
    if (g.nodes[p].ints[0] != static_cast<int64_t>(rank) - 1) continue;
    const uint32_t scaled = g.nodes[p].in[0];
    if (rw.sole_consumer(scaled) != p) continue;
    auto [s, scale] = unscale(rw, scaled);
    if (s != scaled && rw.sole_consumer(s) != scaled) continue;
    if (!std::isfinite(*scale)) continue;
    if (g.nodes[s].op != Op::MatMul) continue;
    const uint32_t q = g.nodes[s].in[0], kt = g.nodes[s].in[1];
    if (g.nodes[kt].op != Op::Transpose || rw.sole_consumer(kt) != s) continue;
    const Shape qs = g.nodes[q].shape, vs = g.nodes[v].shape, out = g.nodes[root].shape;
    if (qs.size() != rank || vs.size() != rank) continue;

    Node att;
    att.op = Op::Attention;
    att.scale = scale;
    if (rank == 3) {
      const uint32_t k = g.nodes[kt].in[0];
      const Shape ks = g.nodes[k].shape;
      if (!is_transpose(g.nodes[kt], {0, 2, 1}) || ks[0] != qs[0] || vs[0] != qs[0]) continue;
      att.in = {q, k, v};
      att.shape = out;
      rw.replace(root, std::move(att));
      continue;
    }
    // Rank 4: q [B, H, Sq, Dh], k^T [B, H, Dh, Sk], v [B, H, Sk, Dv].
    const Shape kts = g.nodes[kt].shape;
    if (kts[0] != qs[0] || vs[0] != qs[0] || kts[1] != qs[1] || vs[1] != qs[1]) continue;
    const bool from_k = is_transpose(g.nodes[kt], {0, 1, 3, 2});     // k is [B, H, Sk, Dh]
    const bool from_split = is_transpose(g.nodes[kt], {0, 2, 3, 1});  // k is [B, Sk, H, Dh]
    if (!from_k && !from_split) continue;
    const int64_t B = qs[0], H = qs[1], Sq = qs[2], Dv = vs[3];
    Rank4 r4(rw);
    const uint32_t k_src = g.nodes[kt].in[0];
    att.in = {r4.from_bhsd(q), from_k ? r4.from_bhsd(k_src) : r4.merge_heads(k_src), r4.from_bhsd(v)};
    att.heads = static_cast<int>(H);
    att.shape = {B, Sq, H * Dv};
    uint32_t a = rw.append(std::move(att));
    uint32_t split = r4.append_reshape(a, {B, Sq, H, Dv});
    Node back;
    back.op = Op::Transpose;
    back.in = {split};
    back.ints = {0, 2, 1, 3};
    back.shape = out;
    rw.replace(root, std::move(back));
  }
  return rw.finish();
}

}  // namespace rungs::passes
