// SPDX-License-Identifier: Apache-2.0
#include "core/passes/fuse_activation.hpp"

#include <algorithm>
#include <cmath>

#include "core/passes/rewrite.hpp"
#include "core/passes/scalar_eval.hpp"

namespace rungs::passes {

using ir::Node;
using ir::Op;

namespace {

constexpr size_t kMaxTree = 16;
constexpr double kSamples[] = {-4.1, -2.7, -1.6, -0.9, -0.35, 0.0, 0.22, 0.61, 1.05, 1.7, 2.45, 3.8};

bool in_tree_op(Op op) {
  switch (op) {
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::Div:
    case Op::Neg:
    case Op::Tanh:
    case Op::Sigmoid:
    case Op::Exp:
    case Op::Erf:
    case Op::Pow:
      return true;
    default:
      return false;
  }
}

bool transcendental(Op op) { return op == Op::Tanh || op == Op::Sigmoid || op == Op::Exp || op == Op::Erf; }

// The nodes of the tree rooted at `root` with leaf `x` (ascending ids), or nothing when a node is
// not an allowed op of the root's shape, a leaf is neither x nor a one-element constant, or a node
// (the root aside) is read from outside the tree.
std::optional<std::vector<uint32_t>> tree_with_leaf(const Rewriter& rw, uint32_t root, uint32_t x) {
  const ir::GraphImpl& g = rw.graph();
  const Shape& shape = g.nodes[root].shape;
  std::vector<uint32_t> tree, stack{root};
  while (!stack.empty()) {
    uint32_t u = stack.back();
    stack.pop_back();
    if (u == x || is_scalar_constant(g.nodes[u]) || std::find(tree.begin(), tree.end(), u) != tree.end()) continue;
    const Node& n = g.nodes[u];
    if (!in_tree_op(n.op) || n.shape != shape || tree.size() == kMaxTree) return std::nullopt;
    tree.push_back(u);
    for (uint32_t src : n.in) stack.push_back(src);
  }
  for (uint32_t u : tree) {
    if (u == root) continue;
    uint32_t reads = 0;
    for (uint32_t r : tree)
      reads += static_cast<uint32_t>(std::count(g.nodes[r].in.begin(), g.nodes[r].in.end(), u));
    if (reads != rw.uses(u)) return std::nullopt;
  }
  std::sort(tree.begin(), tree.end());
  return tree;
}

double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double gelu_tanh(double x) {
  const double k = std::sqrt(2.0 / 3.14159265358979323846);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}
double silu(double x) { return x / (1.0 + std::exp(-x)); }

// Which activation the tree computes, if any.
std::optional<Op> recognise(const ir::GraphImpl& g, const std::vector<uint32_t>& tree, uint32_t x) {
  if (std::none_of(tree.begin(), tree.end(), [&](uint32_t u) { return transcendental(g.nodes[u].op); }))
    return std::nullopt;
  const std::pair<Op, double (*)(double)> targets[] = {{Op::Gelu, gelu}, {Op::GeluTanh, gelu_tanh}, {Op::Silu, silu}};
  std::vector<double> f;
  for (double s : kSamples) {
    auto v = eval_tree(g, tree, x, s);
    if (!v) return std::nullopt;
    f.push_back(*v);
  }
  for (const auto& [op, fn] : targets) {
    bool same = true;
    for (size_t i = 0; i < f.size() && same; ++i) {
      const double want = fn(kSamples[i]);
      same = std::fabs(f[i] - want) <= 1e-6 * std::max(1.0, std::fabs(want));  // false for NaN
    }
    if (same) return op;
  }
  return std::nullopt;
}

// Candidate leaves: the nodes of the root's shape met below it through allowed ops; none when no
// tanh, sigmoid or exp is met (the common case of a Mul or Div, cheap to rule out).
std::vector<uint32_t> candidates(const ir::GraphImpl& g, uint32_t root) {
  std::vector<uint32_t> seen, stack{root}, out;
  bool nonlinear = false;
  while (!stack.empty() && seen.size() < 2 * kMaxTree) {
    uint32_t u = stack.back();
    stack.pop_back();
    if (std::find(seen.begin(), seen.end(), u) != seen.end()) continue;
    seen.push_back(u);
    const Node& n = g.nodes[u];
    if (u != root && n.shape == g.nodes[root].shape && !is_scalar_constant(n)) out.push_back(u);
    if (in_tree_op(n.op)) {
      nonlinear = nonlinear || transcendental(n.op);
      for (uint32_t src : n.in) stack.push_back(src);
    }
  }
  if (!nonlinear) out.clear();
  return out;
}

}  // namespace

bool fuse_activation(ir::GraphImpl& g) {
  Rewriter rw(g);
  const uint32_t count = static_cast<uint32_t>(g.nodes.size());
  for (uint32_t root = 0; root < count; ++root) {
    const Op op = g.nodes[root].op;
    if ((op != Op::Mul && op != Op::Div) || rw.uses(root) == 0) continue;
    for (uint32_t x : candidates(g, root)) {
      auto tree = tree_with_leaf(rw, root, x);
      if (!tree) continue;
      auto act = recognise(g, *tree, x);
      if (!act) continue;
      Node fused;
      fused.op = *act;
      fused.in = {x};
      fused.shape = g.nodes[root].shape;
      rw.replace(root, std::move(fused));
      break;
    }
  }
  return rw.finish();
}

}  // namespace rungs::passes
