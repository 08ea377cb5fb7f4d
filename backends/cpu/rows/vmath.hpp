// SPDX-License-Identifier: Apache-2.0
// backends/cpu/rows/vmath.hpp: the activation functions on xsimd batches, and the same formulas on
// scalars for the references. xsimd's exp/log/erf/tanh are accurate to a few ulp (erf well inside
// the 1e-6 the elementwise tests demand against std::erf in double).
#pragma once

#include <cmath>
#include <limits>

#include <xsimd/xsimd.hpp>

namespace rungs::backend::cpu::vmath {

constexpr float kInvSqrt2 = 0.70710678118654752f;
constexpr float kSqrt2OverPi = 0.79788456080286536f;
constexpr float kGeluTanhCubic = 0.044715f;

template <class B>
inline B sigmoid(const B& x) {
  return B(1.f) / (B(1.f) + xsimd::exp(-x));
}
template <class B>
inline B silu(const B& x) {
  return x * sigmoid(x);
}
// erf-exact GELU: x/2 * (1 + erf(x / sqrt 2)), computed as x/2 * erfc(-x / sqrt 2): for x below
// about -3, 1 + erf(x / sqrt 2) cancels to a few float ulps of 1 and lost up to 10% of a (tiny)
// result, which a layer norm of such a row then magnifies (fuzz_api found it against the double
// reference); erfc has the tail to full relative precision.
template <class B>
inline B gelu(const B& x) {
  return B(0.5f) * x * xsimd::erfc(-x * B(kInvSqrt2));
}
// tanh approximation: x/2 * (1 + tanh(u)), u = sqrt(2/pi) * (x + 0.044715 x^3), computed as
// x / (1 + exp(-2u)) (the same function): 1 + tanh(u) cancels for u below about -2, as erf does
// in gelu above, and a norm of the result magnifies what it lost.
template <class B>
inline B gelu_tanh(const B& x) {
  const B inner = B(kSqrt2OverPi) * (x + B(kGeluTanhCubic) * x * x * x);
  return x / (B(1.f) + xsimd::exp(B(-2.f) * inner));
}

// NaN rule (docs/numerics.md): max, min and relu return NaN when an operand is NaN, on every
// ISA. xsimd::max / min follow the instruction (x86's maxps returns its second operand when either
// is NaN, so max(NaN, 0) is 0), hence the selects.
template <class B>
inline B maximum(const B& a, const B& b) {
  return xsimd::select(xsimd::isnan(a), a, xsimd::select(xsimd::isnan(b), b, xsimd::max(a, b)));
}
template <class B>
inline B minimum(const B& a, const B& b) {
  return xsimd::select(xsimd::isnan(a), a, xsimd::select(xsimd::isnan(b), b, xsimd::min(a, b)));
}
template <class B>
inline B relu(const B& x) {
  return xsimd::select(xsimd::isnan(x), x, xsimd::max(x, B(0.f)));
}
// The largest lane, NaN when any lane is NaN.
template <class B>
inline float reduce_maximum(const B& x) {
  return xsimd::any(xsimd::isnan(x)) ? std::numeric_limits<float>::quiet_NaN() : xsimd::reduce_max(x);
}

// Scalar twins: the one scalar meaning of each function, used by every reference (the elementwise
// one, the GEMM epilogue's, Device::Reference through them). Computed in double, so the reference
// is the more accurate side.
template <class T>
inline T maximum_ref(T a, T b) {
  return std::isnan(a) ? a : std::isnan(b) ? b : (a > b ? a : b);
}
template <class T>
inline T minimum_ref(T a, T b) {
  return std::isnan(a) ? a : std::isnan(b) ? b : (a < b ? a : b);
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

}  // namespace rungs::backend::cpu::vmath
