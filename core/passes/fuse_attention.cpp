// SPDX-License-Identifier: Apache-2.0
#include "core/passes/fuse_attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "core/passes/rewrite.hpp"
#include "core/passes/scalar_eval.hpp"

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

// What an additive constant mask means for Attention, when it maps exactly.
struct MaskMeaning {
  bool causal = false;
  std::vector<float> keep;  // [B, Sk] keep mask (1 keeps, 0 drops); empty when none
};

// `mask` (a Constant broadcast onto scores of shape [B, (H,) Sq, Sk]) maps exactly when every value
// is 0 or -inf, it does not vary over heads, no query row loses all its keys (the primitive softmax
// would give NaN there, Attention zeros), and it is either the bottom-right causal triangle or the
// same for every query row (a key mask).
std::optional<MaskMeaning> mask_meaning(const Node& mask, const Shape& scores) {
  constexpr int64_t kMaxChecked = int64_t{1} << 24;
  const size_t r = scores.size(), rm = mask.shape.size();
  if (rm > r || shape_numel(scores) > kMaxChecked) return std::nullopt;
  const int64_t B = scores[0], Sq = scores[r - 2], Sk = scores[r - 1];
  if (r == 4 && rm >= 3 && mask.shape[rm - 3] != 1) return std::nullopt;  // differs per head
  // Strides of the mask over (b, i, j), 0 where it broadcasts.
  auto stride_of = [&](size_t axis) -> int64_t {  // axis of the scores
    if (axis + rm < r) return 0;
    size_t ma = axis + rm - r;
    if (mask.shape[ma] == 1) return 0;
    int64_t st = 1;
    for (size_t k = ma + 1; k < rm; ++k) st *= mask.shape[k];
    return st;
  };
  const int64_t sb = stride_of(0), si = stride_of(r - 2), sj = stride_of(r - 1);
  const std::vector<float>& m = *mask.data;
  const float ninf = -std::numeric_limits<float>::infinity();
  for (float x : m)
    if (x != 0.f && x != ninf) return std::nullopt;
  auto at = [&](int64_t b, int64_t i, int64_t j) { return m[static_cast<size_t>(b * sb + i * si + j * sj)]; };

  bool causal = Sk >= Sq, per_key = true;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < Sq; ++i)
      for (int64_t j = 0; j < Sk; ++j) {
        causal = causal && ((at(b, i, j) == ninf) == (j > i + (Sk - Sq)));
        per_key = per_key && at(b, i, j) == at(b, 0, j);
      }
  MaskMeaning out;
  if (causal) {
    out.causal = true;
    return out;
  }
  if (!per_key) return std::nullopt;
  out.keep.resize(static_cast<size_t>(B * Sk));
  for (int64_t b = 0; b < B; ++b) {
    bool any = false;
    for (int64_t j = 0; j < Sk; ++j) {
      bool keep = at(b, 0, j) == 0.f;
      out.keep[static_cast<size_t>(b * Sk + j)] = keep ? 1.f : 0.f;
      any = any || keep;
    }
    if (!any) return std::nullopt;
  }
  return out;
}

// A run-time key mask: the tensor added to the scores is f(src) for one graph input `src` of B * Sk
// values (the attention mask), through reshapes and elementwise ops with one-element constants,
// broadcast over heads and queries only. With src holding 1 (keep) and 0 (drop), it maps onto a
// keep mask when f(1) == 0 and f(0) <= -1e4 (the mask is src) or f(0) == 0 and f(1) <= -1e4 (1 - src).
struct RuntimeMask {
  uint32_t src = 0;
  bool invert = false;
};

constexpr double kMaskedOut = -1e4;  // exp(-1e4) is 0 in f32: such a score drops its key

// Right-aligned against scores [B, (H,) Sq, Sk], `m` is [B, 1, ..., Sk] (missing leading dims are 1).
bool is_key_mask_shape(const Shape& m, const Shape& scores) {
  const size_t r = scores.size(), rm = m.size();
  if (rm > r) return false;
  for (size_t a = 0; a < r; ++a) {
    const int64_t md = a + rm >= r ? m[a + rm - r] : 1;
    const int64_t want = a == r - 1 ? scores[a] : a == 0 ? scores[0]
                                                         : 1;  // Sk, B, 1 (heads, queries)
    if (md != want) return false;
  }
  return true;
}

// Through ONNX Expand as the frontend writes it (an add of zeros, or a multiply by ones, of the
// expanded shape): the value before broadcasting.
uint32_t before_expand(const ir::GraphImpl& g, uint32_t id) {
  for (;;) {
    const Node& n = g.nodes[id];
    if (n.op != Op::Add && n.op != Op::Mul) return id;
    const float neutral = n.op == Op::Add ? 0.f : 1.f;
    std::optional<uint32_t> inner;
    for (int k = 0; k < 2 && !inner; ++k) {
      const Node& c = g.nodes[n.in[1 - k]];
      if (c.op == Op::Constant && c.data &&
          std::all_of(c.data->begin(), c.data->end(), [&](float v) { return v == neutral; }))
        inner = n.in[k];
    }
    if (!inner) return id;
    id = *inner;
  }
}

// The tree computing a mask from one graph input `src` of B * Sk values (see RuntimeMask), after
// any Expand; nodes in evaluation order.
struct MaskTree {
  uint32_t src = 0;
  std::vector<uint32_t> nodes;
};

std::optional<MaskTree> mask_tree(const ir::GraphImpl& g, uint32_t m, const Shape& scores) {
  m = before_expand(g, m);
  if (!is_key_mask_shape(g.nodes[m].shape, scores)) return std::nullopt;
  const int64_t want = scores[0] * scores.back();
  std::vector<uint32_t> tree, stack{m};
  std::optional<uint32_t> src;
  while (!stack.empty()) {
    const uint32_t u = stack.back();
    stack.pop_back();
    const Node& n = g.nodes[u];
    if (is_scalar_constant(n) || std::find(tree.begin(), tree.end(), u) != tree.end() || u == src) continue;
    if (n.op == Op::Input) {
      if (src || shape_numel(n.shape) != want) return std::nullopt;
      src = u;
      continue;
    }
    if ((!ir::is_elementwise(n.op) && n.op != Op::Reshape) || shape_numel(n.shape) != want || tree.size() == 16)
      return std::nullopt;
    tree.push_back(u);
    for (uint32_t in : n.in) stack.push_back(in);
  }
  if (!src) return std::nullopt;
  std::sort(tree.begin(), tree.end());
  return MaskTree{*src, std::move(tree)};
}

// From whether mask value 0 and mask value 1 keep the key: the keep mask, if it is one.
std::optional<RuntimeMask> keep_mask_of(uint32_t src, bool keeps0, bool keeps1) {
  if (keeps1 && !keeps0) return RuntimeMask{src, false};
  if (keeps0 && !keeps1) return RuntimeMask{src, true};
  return std::nullopt;
}

// scores + m: a key is kept where f is 0 and dropped where f <= -1e4 (one of the two each).
std::optional<RuntimeMask> additive_mask(const ir::GraphImpl& g, uint32_t m, const Shape& scores) {
  auto t = mask_tree(g, m, scores);
  if (!t) return std::nullopt;
  auto f0 = eval_tree(g, t->nodes, t->src, 0.0), f1 = eval_tree(g, t->nodes, t->src, 1.0);
  if (!f0 || !f1) return std::nullopt;
  const bool ok0 = *f0 == 0.0 || *f0 <= kMaskedOut, ok1 = *f1 == 0.0 || *f1 <= kMaskedOut;
  if (!ok0 || !ok1) return std::nullopt;
  return keep_mask_of(t->src, *f0 == 0.0, *f1 == 0.0);
}

// where(cond, scores, c) (scores_if_true) or where(cond, c, scores), c <= -1e4: a key is kept
// where the scores are selected.
std::optional<RuntimeMask> where_mask(const ir::GraphImpl& g, uint32_t cond, const Shape& scores, bool scores_if_true) {
  auto t = mask_tree(g, cond, scores);
  if (!t) return std::nullopt;
  auto c0 = eval_tree(g, t->nodes, t->src, 0.0), c1 = eval_tree(g, t->nodes, t->src, 1.0);
  if (!c0 || !c1) return std::nullopt;
  return keep_mask_of(t->src, (*c0 != 0.0) == scores_if_true, (*c1 != 0.0) == scores_if_true);
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
    uint32_t scaled = g.nodes[p].in[0];
    if (rw.sole_consumer(scaled) != p) continue;
    // Optional additive mask: add(scores, M) or add(M, scores) with M a constant that maps exactly.
    std::optional<MaskMeaning> mask;
    std::optional<RuntimeMask> key_mask;
    if (g.nodes[scaled].op == Op::Add) {
      const Node& add = g.nodes[scaled];
      for (int k = 0; k < 2 && !mask && !key_mask; ++k) {
        const uint32_t m = add.in[k], other = add.in[1 - k];
        if (g.nodes[other].shape != add.shape || rw.sole_consumer(other) != scaled) continue;
        if (g.nodes[m].op == Op::Constant)
          mask = mask_meaning(g.nodes[m], add.shape);
        else
          key_mask = additive_mask(g, m, add.shape);
        if (mask || key_mask) scaled = other;
      }
      if (!mask && !key_mask) continue;
    } else if (g.nodes[scaled].op == Op::Where) {
      // masked_fill: where(cond, c, scores) or where(cond, scores, c) with c <= -1e4 (or -inf)
      const Node& w = g.nodes[scaled];
      for (int k = 1; k <= 2 && !key_mask; ++k) {
        const uint32_t sc = w.in[k];
        const std::optional<float> c = scalar_constant(g, w.in[3 - k]);
        if (!c || !(*c <= kMaskedOut) || g.nodes[sc].shape != w.shape || rw.sole_consumer(sc) != scaled) continue;
        if ((key_mask = where_mask(g, w.in[0], w.shape, k == 1))) scaled = sc;
      }
      if (!key_mask) continue;
    }
    auto [s, scale] = unscale(rw, scaled);
    if (s != scaled && rw.sole_consumer(s) != scaled) continue;
    if (!std::isfinite(*scale)) continue;
    if (g.nodes[s].op != Op::MatMul) continue;
    uint32_t q = g.nodes[s].in[0];
    const uint32_t kt = g.nodes[s].in[1];
    // Queries scaled before the product (DistilBERT: q / sqrt(Dh)) fold into the scale too.
    if (auto [q_in, q_scale] = unscale(rw, q); q_in != q && rw.sole_consumer(q) == s && std::isfinite(*q_scale)) {
      q = q_in;
      scale = *scale * *q_scale;
    }
    if (g.nodes[kt].op != Op::Transpose || rw.sole_consumer(kt) != s) continue;
    const Shape qs = g.nodes[q].shape, vs = g.nodes[v].shape, out = g.nodes[root].shape;
    if (qs.size() != rank || vs.size() != rank) continue;

    Node att;
    att.op = Op::Attention;
    att.scale = scale;
    att.causal = mask && mask->causal;
    // The keep mask is appended only once the pattern is known to match (below).
    auto add_keep_mask = [&](int64_t B, int64_t Sk) {
      if (key_mask) {
        uint32_t keep = key_mask->src;
        if (rw.node(keep).shape != Shape{B, Sk}) {
          Node r;
          r.op = Op::Reshape;
          r.in = {keep};
          r.shape = {B, Sk};
          keep = rw.append(std::move(r));
        }
        if (key_mask->invert) {
          Node one, sub;
          one.op = Op::Constant;
          one.shape = {1};
          one.data = std::make_shared<const std::vector<float>>(1, 1.f);
          sub.op = Op::Sub;
          sub.in = {rw.append(std::move(one)), keep};
          sub.shape = {B, Sk};
          keep = rw.append(std::move(sub));
        }
        att.in.push_back(keep);
        att.has_mask = true;
        return;
      }
      if (!mask || mask->keep.empty()) return;
      Node c;
      c.op = Op::Constant;
      c.shape = {B, Sk};
      c.data = std::make_shared<const std::vector<float>>(mask->keep);
      att.in.push_back(rw.append(std::move(c)));
      att.has_mask = true;
    };
    if (rank == 3) {
      uint32_t k = g.nodes[kt].in[0];
      const Shape ks = g.nodes[k].shape;
      // k^T from k [B, Sk, Dh] ({0, 2, 1}) or, as torch's MultiheadAttention exports it, from k
      // [Sk, B, Dh] ({1, 2, 0}): that k is read through a transpose to [B, Sk, Dh].
      const bool from_bsd = is_transpose(g.nodes[kt], {0, 2, 1});
      const bool from_sbd = is_transpose(g.nodes[kt], {1, 2, 0});
      const Shape kb = from_sbd ? Shape{ks[1], ks[0], ks[2]} : ks;
      if ((!from_bsd && !from_sbd) || kb[0] != qs[0] || vs[0] != qs[0]) continue;
      if (from_sbd) {
        Node t;
        t.op = Op::Transpose;
        t.in = {k};
        t.ints = {1, 0, 2};
        t.shape = kb;
        k = rw.append(std::move(t));
      }
      att.in = {q, k, v};
      add_keep_mask(qs[0], kb[1]);
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
    add_keep_mask(B, vs[2]);
    att.shape = {B, Sq, H * Dv};
    uint32_t a = rw.append(std::move(att));
    uint32_t split = r4.append_reshape(a, {B, Sq, H, Dv});
    Node back;
    back.op = Op::Transpose;
    back.in = {split};
    back.ints = {0, 2, 1, 3};
    back.shape = out;
    // The exporter's own transpose back to [B, Sq, H, Dv] cancels this one: read the split directly.
    const std::optional<uint32_t> reader = rw.sole_consumer(root);
    rw.replace(root, std::move(back));
    if (reader && is_transpose(rw.node(*reader), {0, 2, 1, 3})) {
      Node same;
      same.op = Op::Reshape;
      same.in = {split};
      same.shape = rw.node(*reader).shape;
      rw.replace(*reader, std::move(same));
    }
  }
  return rw.finish();
}

}  // namespace rungs::passes
