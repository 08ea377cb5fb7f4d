// SPDX-License-Identifier: Apache-2.0
#include "core/passes/fuse_matmul_epilogue.hpp"

#include <optional>
#include <vector>

#include "core/passes/rewrite.hpp"

namespace rungs::passes {

using ir::Node;
using ir::Op;

namespace {

std::optional<Activation> activation_of(Op op) {
  switch (op) {
    case Op::Relu: return Activation::Relu;
    case Op::Gelu: return Activation::Gelu;
    case Op::GeluTanh: return Activation::GeluTanh;
    case Op::Silu: return Activation::Silu;
    case Op::Tanh: return Activation::Tanh;
    case Op::Sigmoid: return Activation::Sigmoid;
    default: return std::nullopt;
  }
}

// [N] or [1, ..., 1, N] with rank <= the output's: broadcast over the last axis only.
bool is_bias_shape(const Shape& s, const Shape& out) {
  if (s.empty() || s.size() > out.size() || s.back() != out.back()) return false;
  for (size_t i = 0; i + 1 < s.size(); ++i)
    if (s[i] != 1) return false;
  return true;
}

// When `y`'s only consumer is an add that keeps y's shape, that add and its other operand.
std::optional<std::pair<uint32_t, uint32_t>> add_after(const Rewriter& rw, uint32_t y) {
  auto c = rw.sole_consumer(y);
  if (!c) return std::nullopt;
  const Node& add = rw.node(*c);
  if (add.op != Op::Add || add.shape != rw.node(y).shape) return std::nullopt;
  uint32_t other = add.in[0] == y ? add.in[1] : add.in[0];
  return std::make_pair(*c, other);
}

// When b is transpose(w, {1, 0}) of a rank-2 param w: w, which the kernel can pack read
// transposed (the transpose then runs never instead of every call).
std::optional<uint32_t> transposed_param(const Rewriter& rw, uint32_t b) {
  const Node& t = rw.node(b);
  if (t.op != Op::Transpose || t.shape.size() != 2 || t.ints != std::vector<int64_t>{1, 0}) return std::nullopt;
  if (rw.node(t.in[0]).op != Op::Param) return std::nullopt;
  return t.in[0];
}

}  // namespace

bool fuse_matmul_epilogue(ir::GraphImpl& g) {
  Rewriter rw(g);
  const uint32_t n = static_cast<uint32_t>(g.nodes.size());
  for (uint32_t mm = 0; mm < n; ++mm) {
    if (g.nodes[mm].op != Op::MatMul) continue;
    const Shape& out = g.nodes[mm].shape;
    uint32_t root = mm;
    ir::Epilogue epi;
    std::optional<uint32_t> bias, residual;

    if (auto add = add_after(rw, root); add && is_bias_shape(rw.node(add->second).shape, out)) {
      bias = add->second;
      epi.bias = true;
      root = add->first;
    }
    if (auto c = rw.sole_consumer(root)) {
      if (auto act = activation_of(rw.node(*c).op)) {
        epi.act = *act;
        root = *c;
      }
    }
    if (auto add = add_after(rw, root); add && rw.node(add->second).shape == out) {
      residual = add->second;
      epi.residual = true;
      root = add->first;
    }
    uint32_t b = g.nodes[mm].in[1];
    if (auto w = transposed_param(rw, b)) {
      b = *w;
      epi.b_transposed = true;
    }
    if (root == mm && !epi.b_transposed) continue;

    Node fused;
    fused.op = Op::FusedMatMul;
    fused.in = {g.nodes[mm].in[0], b};
    if (bias) fused.in.push_back(*bias);
    if (residual) fused.in.push_back(*residual);
    fused.shape = out;
    fused.epi = epi;
    rw.replace(root, std::move(fused));
  }
  return rw.finish();
}

}  // namespace rungs::passes
