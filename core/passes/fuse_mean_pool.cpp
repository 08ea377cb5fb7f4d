// SPDX-License-Identifier: Apache-2.0
#include "core/passes/fuse_mean_pool.hpp"

#include <algorithm>

#include "core/passes/rewrite.hpp"

namespace rungs::passes {

using ir::Node;
using ir::Op;

namespace {

bool all_equal(const Node& n, float v) {
  return n.op == Op::Constant && n.data && std::all_of(n.data->begin(), n.data->end(), [&](float x) { return x == v; });
}

// `e` broadcasts a [B, S, 1] value to e's [B, S, D] by adding zeros or multiplying by ones.
std::optional<uint32_t> broadcast_source(const ir::GraphImpl& g, uint32_t e) {
  const Node& n = g.nodes[e];
  if ((n.op != Op::Add && n.op != Op::Mul) || n.shape.size() != 3) return std::nullopt;
  const Shape want{n.shape[0], n.shape[1], 1};
  for (int k = 0; k < 2; ++k) {
    const Node& c = g.nodes[n.in[1 - k]];
    if (g.nodes[n.in[k]].shape == want && c.shape == n.shape && all_equal(c, n.op == Op::Add ? 0.f : 1.f))
      return n.in[k];
  }
  return std::nullopt;
}

bool is_sum_over_axis1(const Node& n) {
  return n.op == Op::ReduceSum && !n.keep_dims && n.ints == std::vector<int64_t>{1};
}

}  // namespace

bool fuse_mean_pool(ir::GraphImpl& g) {
  Rewriter rw(g);
  const uint32_t count = static_cast<uint32_t>(g.nodes.size());
  for (uint32_t root = 0; root < count; ++root) {
    const Node& div = g.nodes[root];
    if (div.op != Op::Div || rw.uses(root) == 0) continue;
    const uint32_t t = div.in[0], n = div.in[1];
    if (!is_sum_over_axis1(g.nodes[t]) || rw.uses(t) != 1 || g.nodes[n].op != Op::Maximum || rw.uses(n) != 1) continue;
    // n = maximum(count, c)
    uint32_t cnt = 0;
    std::optional<float> c;
    for (int k = 0; k < 2 && !c; ++k)
      if ((c = scalar_constant(g, g.nodes[n].in[1 - k]))) cnt = g.nodes[n].in[k];
    if (!c || !is_sum_over_axis1(g.nodes[cnt]) || rw.uses(cnt) != 1) continue;
    const uint32_t e = g.nodes[cnt].in[0];
    const uint32_t prod = g.nodes[t].in[0];
    const Node& p = g.nodes[prod];
    if (p.op != Op::Mul || rw.uses(prod) != 1 || rw.uses(e) != 2) continue;
    std::optional<uint32_t> x;
    for (int k = 0; k < 2 && !x; ++k)
      if (p.in[1 - k] == e && p.in[k] != e && g.nodes[p.in[k]].shape == p.shape) x = p.in[k];
    if (!x || p.shape != g.nodes[e].shape) continue;
    const auto m = broadcast_source(g, e);
    if (!m) continue;

    const Shape xs = p.shape;  // [B, S, D]; copied: appending below moves the nodes
    const uint32_t floor = g.nodes[n].in[0] == cnt ? g.nodes[n].in[1] : g.nodes[n].in[0];
    if (div.shape != Shape{xs[0], xs[2]} || g.nodes[floor].shape.size() > 2) continue;
    auto append = [&](Op op, std::vector<uint32_t> in, Shape shape, bool reduce = false) {
      Node a;
      a.op = op;
      a.in = std::move(in);
      a.shape = std::move(shape);
      if (reduce) a.ints = {1};
      return rw.append(std::move(a));
    };
    const uint32_t masked = append(Op::Mul, {*x, *m}, xs);
    const uint32_t total = append(Op::ReduceSum, {masked}, {xs[0], xs[2]}, true);
    const uint32_t rows = append(Op::ReduceSum, {*m}, {xs[0], 1}, true);
    const uint32_t safe = append(Op::Maximum, {rows, floor}, {xs[0], 1});
    Node out;
    out.op = Op::Div;
    out.in = {total, safe};
    out.shape = {xs[0], xs[2]};
    rw.replace(root, std::move(out));
  }
  return rw.finish();
}

}  // namespace rungs::passes
