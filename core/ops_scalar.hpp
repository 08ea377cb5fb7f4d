// SPDX-License-Identifier: Apache-2.0
// core/ops_scalar.hpp: the one scalar meaning of every elementwise op.
//
// Every place that needs what an elementwise op computes on one value reads it here: the
// elementwise reference (Device::Reference, and the kernel tests through it), the GEMM epilogue's
// reference, the vector kernels' scalar tails (backends/cpu/rows/vmath.hpp re-exports these), and
// the passes that recognise a pattern by evaluating it (core/passes/scalar_eval.cpp, in double).
// The NaN rule of docs/numerics.md lives here once: maximum, minimum and relu propagate a NaN.
// Transcendentals are computed in double whatever T is, so the reference is the more accurate side.
#pragma once

#include <cmath>
#include <optional>

#include "core/ops.hpp"

namespace rungs::ops::scalar {

template <class T>
inline T maximum_ref(T a, T b) {
  return std::isnan(a) ? a : std::isnan(b) ? b
                                           : (a > b ? a : b);
}
template <class T>
inline T minimum_ref(T a, T b) {
  return std::isnan(a) ? a : std::isnan(b) ? b
                                           : (a < b ? a : b);
}
template <class T>
inline T relu_ref(T x) {
  return std::isnan(x) || x > T(0) ? x : T(0);
}
inline double sigmoid_ref(double x) { return 1.0 / (1.0 + std::exp(-x)); }
inline double silu_ref(double x) { return x / (1.0 + std::exp(-x)); }
inline double gelu_ref(double x) { return 0.5 * x * (1.0 + std::erf(x * 0.70710678118654752)); }
inline double gelu_tanh_ref(double x) {
  return 0.5 * x * (1.0 + std::tanh(0.79788456080286536 * (x + 0.044715 * x * x * x)));
}
template <class T>
inline T pow_ref(T x, T y) {
  return static_cast<T>(std::pow(double(x), double(y)));
}
template <class T>
inline T erf_ref(T x) {
  return static_cast<T>(std::erf(double(x)));
}
template <class T>
inline T sin_ref(T x) {
  return static_cast<T>(std::sin(double(x)));
}
template <class T>
inline T cos_ref(T x) {
  return static_cast<T>(std::cos(double(x)));
}
template <class T>
inline T logical_not_ref(T x) {
  return x == T(0) ? T(1) : T(0);
}
template <class T>
inline T where_ref(T c, T a, T b) {
  return c != T(0) ? a : b;  // a NaN condition picks a, as the vector kernels' select does
}

// What elementwise op `op` gives for (a, b, c) (unary ops read a; where reads cond a, then b, c),
// in T's arithmetic; nothing for an op that is not elementwise.
template <class T>
inline std::optional<T> eval(Op op, T a, T b, T c) {
  switch (op) {
    case Op::Add: return a + b;
    case Op::Sub: return a - b;
    case Op::Mul: return a * b;
    case Op::Div: return a / b;
    case Op::Maximum: return maximum_ref(a, b);
    case Op::Minimum: return minimum_ref(a, b);
    case Op::Relu: return relu_ref(a);
    case Op::Gelu: return static_cast<T>(gelu_ref(a));
    case Op::GeluTanh: return static_cast<T>(gelu_tanh_ref(a));
    case Op::Silu: return static_cast<T>(silu_ref(a));
    case Op::Sigmoid: return static_cast<T>(sigmoid_ref(a));
    case Op::Tanh: return std::tanh(a);
    case Op::Exp: return std::exp(a);
    case Op::Log: return std::log(a);
    case Op::Sqrt: return std::sqrt(a);
    case Op::Rsqrt: return T(1) / std::sqrt(a);
    case Op::Neg: return -a;
    case Op::Abs: return std::fabs(a);
    case Op::Pow: return pow_ref(a, b);
    case Op::Equal: return a == b ? T(1) : T(0);
    case Op::Less: return a < b ? T(1) : T(0);
    case Op::Greater: return a > b ? T(1) : T(0);
    case Op::LessEqual: return a <= b ? T(1) : T(0);
    case Op::GreaterEqual: return a >= b ? T(1) : T(0);
    case Op::Erf: return erf_ref(a);
    case Op::Sin: return sin_ref(a);
    case Op::Cos: return cos_ref(a);
    case Op::LogicalNot: return logical_not_ref(a);
    case Op::Where: return where_ref(a, b, c);
    default: return std::nullopt;
  }
}

}  // namespace rungs::ops::scalar
