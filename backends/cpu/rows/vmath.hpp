// SPDX-License-Identifier: Apache-2.0
// backends/cpu/rows/vmath.hpp: the activation functions on xsimd batches, and the same formulas on
// scalars for the references. xsimd's exp/log/erf/tanh are accurate to a few ulp (erf well inside
// the 1e-6 the elementwise tests demand against std::erf in double).
#pragma once

#include <cmath>

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
// erf-exact GELU: x/2 * (1 + erf(x / sqrt 2)).
template <class B>
inline B gelu(const B& x) {
  return B(0.5f) * x * (B(1.f) + xsimd::erf(x * B(kInvSqrt2)));
}
// tanh approximation: x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))).
template <class B>
inline B gelu_tanh(const B& x) {
  B inner = B(kSqrt2OverPi) * (x + B(kGeluTanhCubic) * x * x * x);
  return B(0.5f) * x * (B(1.f) + xsimd::tanh(inner));
}

// Scalar twins (references), computed in double so the reference is the more accurate side.
inline float sigmoid_ref(float x) { return static_cast<float>(1.0 / (1.0 + std::exp(-double(x)))); }
inline float silu_ref(float x) { return static_cast<float>(double(x) / (1.0 + std::exp(-double(x)))); }
inline float gelu_ref(float x) {
  return static_cast<float>(0.5 * double(x) * (1.0 + std::erf(double(x) * 0.70710678118654752)));
}
inline float gelu_tanh_ref(float x) {
  double d = x;
  return static_cast<float>(0.5 * d * (1.0 + std::tanh(0.79788456080286536 * (d + 0.044715 * d * d * d))));
}

}  // namespace rungs::backend::cpu::vmath
