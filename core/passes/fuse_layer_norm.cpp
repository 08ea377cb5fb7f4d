// SPDX-License-Identifier: Apache-2.0
#include "core/passes/fuse_layer_norm.hpp"

#include <cmath>
#include <memory>

#include "core/passes/rewrite.hpp"

namespace rungs::passes {

using ir::Node;
using ir::Op;

namespace {

// `id` is a keep-dims mean of `x` over its last axis only.
bool is_last_axis_mean(const Rewriter& rw, uint32_t id, uint32_t* x = nullptr) {
  const Node& n = rw.node(id);
  if (n.op != Op::ReduceMean || !n.keep_dims) return false;
  const Shape& xs = rw.node(n.in[0]).shape;
  if (xs.empty() || n.ints != std::vector<int64_t>{static_cast<int64_t>(xs.size()) - 1}) return false;
  if (x) *x = n.in[0];
  return true;
}

// The other operand of binary node `n` when one operand is `id`.
std::optional<uint32_t> other_operand(const Node& n, uint32_t id) {
  if (n.in.size() != 2) return std::nullopt;
  if (n.in[0] == id) return n.in[1];
  if (n.in[1] == id) return n.in[0];
  return std::nullopt;
}

// [D] or [1, ..., 1, D], no wider than `out`: a per-feature vector broadcast over the rows.
bool is_row_vector(const Shape& s, const Shape& out) {
  if (s.empty() || s.size() > out.size() || s.back() != out.back()) return false;
  for (size_t i = 0; i + 1 < s.size(); ++i)
    if (s[i] != 1) return false;
  return true;
}

struct Match {
  uint32_t x = 0;
  bool rms = false;
  float eps = 0.f;
};

// The pattern below the normalized value `nd` (d / sqrt(v) and its spellings), or nothing.
std::optional<Match> match_normalized(const Rewriter& rw, uint32_t nd) {
  const ir::GraphImpl& g = rw.graph();
  const Node& n = rw.node(nd);
  const Shape& out = n.shape;
  if (out.empty() || n.in.size() != 2) return std::nullopt;
  // d and the inverse-root subtree, whose own nodes must be read once (inside the pattern).
  uint32_t d = 0, v = 0;
  auto single = [&](uint32_t id) { return rw.uses(id) == 1; };
  auto sqrt_of = [&](uint32_t id, uint32_t* arg) {
    if (rw.node(id).op != Op::Sqrt || !single(id)) return false;
    *arg = rw.node(id).in[0];
    return true;
  };
  // 1 / sqrt(v) or rsqrt(v)
  auto inv_sqrt_of = [&](uint32_t id, uint32_t* arg) {
    const Node& r = rw.node(id);
    if (!single(id)) return false;
    if (r.op == Op::Rsqrt) {
      *arg = r.in[0];
      return true;
    }
    if (r.op == Op::Div && scalar_constant(g, r.in[0]) == 1.f) return sqrt_of(r.in[1], arg);
    return false;
  };
  bool found = false;
  if (n.op == Op::Div) {
    d = n.in[0];
    found = sqrt_of(n.in[1], &v);
  } else if (n.op == Op::Mul) {
    for (int k = 0; k < 2 && !found; ++k)
      if (inv_sqrt_of(n.in[k], &v)) {
        d = n.in[1 - k];
        found = true;
      }
  }
  if (!found || rw.node(d).shape != out) return std::nullopt;

  Match m;
  // v = mean(q) [+ eps]
  if (const Node& a = rw.node(v); a.op == Op::Add) {
    if (!single(v)) return std::nullopt;
    std::optional<float> eps;
    for (int k = 0; k < 2 && !eps; ++k)
      if ((eps = scalar_constant(g, a.in[k])) && rw.node(a.in[1 - k]).shape == a.shape) v = a.in[1 - k];
    if (!eps || !std::isfinite(*eps) || !(*eps >= 0.f)) return std::nullopt;
    m.eps = *eps;
  }
  uint32_t q = 0;
  if (!single(v) || !is_last_axis_mean(rw, v, &q) || !single(q)) return std::nullopt;
  // q = d * d or pow(d, 2); d's reads: the square (once or twice) and nd
  const Node& sq = rw.node(q);
  uint32_t d_reads = 0;
  if (sq.op == Op::Mul && sq.in[0] == d && sq.in[1] == d)
    d_reads = 3;
  else if (sq.op == Op::Pow && sq.in[0] == d && scalar_constant(g, sq.in[1]) == 2.f)
    d_reads = 2;
  else
    return std::nullopt;

  // d = x - mean(x): layer norm (d read only by the pattern); else rms norm of d.
  const Node& dn = rw.node(d);
  uint32_t x = 0;
  if (dn.op == Op::Sub && rw.uses(d) == d_reads && is_last_axis_mean(rw, dn.in[1], &x) && x == dn.in[0] &&
      single(dn.in[1])) {
    m.x = x;
    return m;
  }
  m.x = d;
  m.rms = true;
  return m;
}

}  // namespace

bool fuse_layer_norm(ir::GraphImpl& g) {
  Rewriter rw(g);
  const uint32_t count = static_cast<uint32_t>(g.nodes.size());
  for (uint32_t nd = 0; nd < count; ++nd) {
    if ((g.nodes[nd].op != Op::Div && g.nodes[nd].op != Op::Mul) || rw.uses(nd) == 0) continue;
    auto m = match_normalized(rw, nd);
    if (!m) continue;
    const Shape out = g.nodes[nd].shape;
    uint32_t root = nd;
    std::optional<uint32_t> gamma, beta;
    if (auto c = rw.sole_consumer(root); c && rw.node(*c).op == Op::Mul && rw.node(*c).shape == out)
      if (auto o = other_operand(rw.node(*c), root); o && *o != root && is_row_vector(rw.node(*o).shape, out)) {
        gamma = *o;
        root = *c;
      }
    if (!m->rms)
      if (auto c = rw.sole_consumer(root); c && rw.node(*c).op == Op::Add && rw.node(*c).shape == out)
        if (auto o = other_operand(rw.node(*c), root); o && *o != root && is_row_vector(rw.node(*o).shape, out)) {
          beta = *o;
          root = *c;
        }
    const int64_t D = out.back();
    // gamma and beta as [D]: a reshape (free) of a [1, ..., D] operand, or a constant when absent.
    auto as_vector = [&](std::optional<uint32_t> v, float fill) {
      if (v && rw.node(*v).shape.size() == 1) return *v;
      Node n;
      n.shape = {D};
      if (v) {
        n.op = Op::Reshape;
        n.in = {*v};
      } else {
        n.op = Op::Constant;
        n.data = std::make_shared<const std::vector<float>>(static_cast<size_t>(D), fill);
      }
      return rw.append(std::move(n));
    };
    Node fused;
    fused.op = m->rms ? Op::RmsNorm : Op::LayerNorm;
    fused.shape = out;
    fused.eps = m->eps;
    fused.in = {m->x, as_vector(gamma, 1.f)};
    if (!m->rms) fused.in.push_back(as_vector(beta, 0.f));
    rw.replace(root, std::move(fused));
  }
  return rw.finish();
}

}  // namespace rungs::passes
