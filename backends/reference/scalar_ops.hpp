// SPDX-License-Identifier: Apache-2.0
// backends/reference/scalar_ops.hpp: the scalar meaning of every elementwise op and activation.
// The reference backend uses these; vector kernels are tested against them.
#pragma once

#include <cmath>

#include "core/ir/graph_impl.hpp"

namespace rungs::backend::ref {

inline float sigmoid(float x) { return 1.f / (1.f + std::exp(-x)); }

inline float unary(ir::Op op, float x) {
  using ir::Op;
  switch (op) {
    case Op::Relu: return x > 0.f ? x : 0.f;
    case Op::Gelu: return 0.5f * x * (1.f + std::erf(x * 0.70710678118654752f));
    case Op::GeluTanh: {
      float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
      return 0.5f * x * (1.f + std::tanh(u));
    }
    case Op::Silu: return x * sigmoid(x);
    case Op::Sigmoid: return sigmoid(x);
    case Op::Tanh: return std::tanh(x);
    case Op::Exp: return std::exp(x);
    case Op::Log: return std::log(x);
    case Op::Sqrt: return std::sqrt(x);
    case Op::Rsqrt: return 1.f / std::sqrt(x);
    case Op::Neg: return -x;
    case Op::Abs: return std::fabs(x);
    default: return x;
  }
}

inline float binary(ir::Op op, float a, float b) {
  using ir::Op;
  switch (op) {
    case Op::Add: return a + b;
    case Op::Sub: return a - b;
    case Op::Mul: return a * b;
    case Op::Div: return a / b;
    case Op::Maximum: return (a != a || b != b) ? a + b : (a > b ? a : b);  // NaN propagates
    case Op::Minimum: return (a != a || b != b) ? a + b : (a < b ? a : b);
    default: return a;
  }
}

inline ir::Op activation_op(Activation act) {
  switch (act) {
    case Activation::Relu: return ir::Op::Relu;
    case Activation::Gelu: return ir::Op::Gelu;
    case Activation::GeluTanh: return ir::Op::GeluTanh;
    case Activation::Silu: return ir::Op::Silu;
    case Activation::Tanh: return ir::Op::Tanh;
    case Activation::Sigmoid: return ir::Op::Sigmoid;
    case Activation::None: break;
  }
  return ir::Op::Input;  // identity
}

inline float activate(Activation act, float x) {
  return act == Activation::None ? x : unary(activation_op(act), x);
}

}  // namespace rungs::backend::ref
