// SPDX-License-Identifier: Apache-2.0
// backends/cpu/rows/vmath.hpp: the activation functions on xsimd batches, and the same formulas on
// scalars for the references. xsimd's exp/log/erf/tanh are accurate to a few ulp (erf well inside
// the 1e-6 the elementwise tests demand against std::erf in double).
#pragma once

#include <cmath>
#include <limits>

#include <xsimd/xsimd.hpp>

#include "core/ops_scalar.hpp"

namespace rungs::backend::cpu::vmath {

constexpr float kInvSqrt2 = 0.70710678118654752f;
constexpr float kSqrt2OverPi = 0.79788456080286536f;
constexpr float kGeluTanhCubic = 0.044715f;

// exp(x) for x <= 0 (or NaN: NaN), as the softmaxes and erfc below need it: x - max, -z^2 + P.
// k = round(x / ln 2) by adding a magic number whose low mantissa bits then hold k + 127, which a
// shift turns into 2^k; exp(r), r = x - k ln 2 (two-part ln 2), by xsimd's degree-5 polynomial.
// Below -87.34 (2^-126, float's smallest normal) the result is 0, so -inf gives 0; xsimd::exp
// returns denormals down to -88.4. No range checks for overflow, no float-to-int conversion, no
// emulated rounding (xsimd's nearbyint is generic bit arithmetic on wasm): the softmax of the
// encoder's attention in wasm spent about a fifth of its time in xsimd::exp.
template <class B>
inline B exp_nonpositive(const B& x) {
  const B magic(12583039.f);  // 1.5 * 2^23 + 127: n's low bits hold round(x / ln 2) + 127
  const B n = xsimd::fma(x, B(1.44269504088896341f), magic);
  const B k = n - magic;
  B r = xsimd::fnma(k, B(0.693359375f), x);  // ln 2 in two parts (xsimd's log_2hi, log_2lo)
  r = xsimd::fnma(k, B(-2.12194440e-4f), r);
  B y = xsimd::fma(B(1.3997796e-03f), r, B(8.3955629e-03f));
  y = xsimd::fma(y, r, B(4.1665401e-02f));
  y = xsimd::fma(y, r, B(1.6666277e-01f));
  y = xsimd::fma(y, r, B(0.5f));
  const B e = B(1.f) + xsimd::fma(y, r * r, r);
  const B scale = xsimd::bitwise_cast<float>(xsimd::bitwise_cast<int32_t>(n) << 23);
  return xsimd::select(x < B(-87.3365402f), B(0.f), e * scale);
}
template <class B>
inline B sigmoid(const B& x) {
  return B(1.f) / (B(1.f) + xsimd::exp(-x));
}
template <class B>
inline B silu(const B& x) {
  return x * sigmoid(x);
}
// erfc(z) for z >= 0 to a relative error of about 1e-7 (before float rounding), without branches:
// t exp(-z^2 + P(t)), t = 1 / (1 + z/2), P a degree-9 polynomial (the Chebyshev fit of Press et
// al., Numerical Recipes, 6.2), P by Estrin's scheme (a chain of four multiply-adds, not nine:
// the activation is latency-bound). xsimd::erfc evaluates one of two rational forms per lane and
// branches on whether any and all lanes need each. GELU through this form: bench_elementwise 13-25%
// faster on AVX-512, AVX2 and SSE4.2, wasm 20 -> 15 ns a vector in Node 20; against erfc in double
// it differs as the xsimd::erfc form does, at most 4e-6 relative for results above 1e-10 (z*z's
// rounding, amplified by exp in both).
template <class B>
inline B erfc_nonnegative(const B& z) {
  const B t = B(1.f) / xsimd::fma(B(0.5f), z, B(1.f));
  const B t2 = t * t, t4 = t2 * t2, t8 = t4 * t4;
  const B p01 = xsimd::fma(B(1.00002368f), t, B(-1.26551223f)), p23 = xsimd::fma(B(0.09678418f), t, B(0.37409196f));
  const B p45 = xsimd::fma(B(0.27886807f), t, B(-0.18628806f)), p67 = xsimd::fma(B(1.48851587f), t, B(-1.13520398f));
  const B p89 = xsimd::fma(B(0.17087277f), t, B(-0.82215223f));
  const B p = xsimd::fma(p89, t8, xsimd::fma(xsimd::fma(p67, t2, p45), t4, xsimd::fma(p23, t2, p01)));
  return t * exp_nonpositive(xsimd::fnma(z, z, p));
}
// erf-exact GELU: x/2 * (1 + erf(x / sqrt 2)). Two forms, chosen per vector:
// - gelu_tail: x/2 * erfc(-x / sqrt 2). For x below about -3, 1 + erf(x / sqrt 2) cancels to a
//   few float ulps of 1 and lost up to 10% of a (tiny) result, which a layer norm of such a row
//   then magnifies (fuzz_api found it against the double reference); erfc has the tail to full
//   relative precision (for x > 0, erfc(-u) = 2 - erfc(u)). A division, a degree-9 polynomial
//   and an exp.
// - gelu_rational: erf(u) = u P(u^2) / Q(u^2), P and Q of degree 5 in u^2 (a relative minimax fit
//   on [0, 3.92], 1.9e-8 in double; erf is 1 in float beyond 3.92, where u is clamped). One
//   division and ten multiply-adds, no exp. Its absolute error, a float ulp or two of erf, is
//   relative error of 1 + erf where that is small: 3.4e-6 at x = -2, 1.4e-5 at -2.5.
// gelu on 4-lane vectors (SSE4.2, wasm) takes the rational form when no lane is below
// kGeluRationalMin (-2) and the tail form otherwise, so every result is within 4e-6 relative of
// erf in double. A vector takes the tail form when any lane is below -2: on the exported encoders
// of tests/models/onnx and the bundled one 2.4% of the values are, 9% of 4-lane vectors and 32%
// of 16-lane ones; on uniform [-3, 3] (bench_elementwise) 52% and 95%. Wider vectors keep the
// tail form: the rational one alone ran 1.7x-2.0x as fast on AVX2 and AVX-512, but with the
// branch AVX-512 ran 0.92x-1.01x and AVX2 0.77x-0.91x as fast on bench_elementwise's data, while
// SSE4.2 ran 1.11x-1.35x as fast there and the wasm encoder's GEMM + bias + GELU about 1.1x.
constexpr float kGeluRationalMin = -2.f;
template <class B>
inline B gelu_tail(const B& x) {
  const B u = x * B(kInvSqrt2);
  const B e = erfc_nonnegative(xsimd::abs(u));
  return B(0.5f) * x * xsimd::select(u > B(0.f), B(2.f) - e, e);
}
template <class B>
inline B gelu_rational(const B& x) {
  const B u = xsimd::min(x * B(kInvSqrt2), B(3.92f));  // NaN: h below is NaN
  const B s = u * u;
  B p = xsimd::fma(B(2.050078965e-06f), s, B(2.848615929e-04f));
  p = xsimd::fma(p, s, B(3.765026869e-03f));
  p = xsimd::fma(p, s, B(5.274685763e-02f));
  p = xsimd::fma(p, s, B(1.903938328e-01f));
  p = xsimd::fma(p, s, B(1.128379146e+00f));
  B q = xsimd::fma(B(3.809052849e-05f), s, B(1.162378140e-03f));
  q = xsimd::fma(q, s, B(1.496803413e-02f));
  q = xsimd::fma(q, s, B(1.141037153e-01f));
  q = xsimd::fma(q, s, B(5.020648850e-01f));
  q = xsimd::fma(q, s, B(1.f));
  const B h = B(0.5f) * x;
  return xsimd::fma(h, u * p / q, h);
}
template <class B>
inline B gelu(const B& x) {
  if constexpr (B::size == 4) {
    return xsimd::any(x < B(kGeluRationalMin)) ? gelu_tail(x) : gelu_rational(x);
  } else {
    return gelu_tail(x);
  }
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

// erf, sin and cos are xsimd's: erf within a few ulp everywhere; sin and cos reduce the argument
// by Cody-Waite in three parts up to about 200 and by an exact (Payne-Hanek, per lane) reduction
// beyond, so they stay within a few ulp of the true value at the thousands sinusoidal positions
// reach (ElementwiseKernel.SinAndCosStayAccurateToLargeArguments).
template <class B>
inline B erf(const B& x) {
  return xsimd::erf(x);
}
template <class B>
inline B sin(const B& x) {
  return xsimd::sin(x);
}
template <class B>
inline B cos(const B& x) {
  return xsimd::cos(x);
}
// std::pow's meaning, special cases included (C99 Annex F): pow(x, +-0) = 1 and pow(1, y) = 1 even
// for NaN, pow(-1, +-inf) = 1, a negative finite base with a finite non-integer exponent is NaN,
// the sign follows an odd integer exponent (copysign, so pow(-0, -1) = -inf). Elsewhere
// exp(y * log|x|), about |y ln x| float ulps off (1e-5 relative at most where it is used); a batch
// with a lane where that leaves float's normal range (|y ln x| > 80: overflow, or results in the
// denormals exp flushes) or with a denormal base is computed lane by lane in double instead.
template <class B>
inline B pow(const B& x, const B& y) {
  const B ax = xsimd::abs(x);
  const B t = y * xsimd::log(ax);
  if (xsimd::any(xsimd::abs(t) > B(80.f) || (ax < B(std::numeric_limits<float>::min()) && ax != B(0.f)))) {
    alignas(64) float xs[B::size], ys[B::size];
    x.store_unaligned(xs);
    y.store_unaligned(ys);
    for (size_t i = 0; i < B::size; ++i) xs[i] = static_cast<float>(std::pow(double(xs[i]), double(ys[i])));
    return B::load_unaligned(xs);
  }
  const B r = xsimd::exp(t);
  const B half = y * B(0.5f);
  const auto integer = xsimd::floor(y) == y;               // true for +-inf, false for NaN
  const auto odd = integer && xsimd::floor(half) != half;  // false for +-inf
  B v = xsimd::select(odd, xsimd::copysign(r, x), r);
  v = xsimd::select(x < B(0.f) && xsimd::isfinite(x) && !integer, B(std::numeric_limits<float>::quiet_NaN()), v);
  v = xsimd::select(y == B(1.f), x, v);
  const auto one = y == B(0.f) || x == B(1.f) || (x == B(-1.f) && xsimd::isinf(y));
  return xsimd::select(one, B(1.f), v);
}
// Comparisons as 1 / 0 (false when an operand is NaN, as in IEEE), logical not, where.
template <class M, class B>
inline B as_float(const M& m) {
  return xsimd::select(m, B(1.f), B(0.f));
}
template <class B>
inline B logical_not(const B& x) {
  return as_float<decltype(x == x), B>(x == B(0.f));
}
template <class B>
inline B where(const B& c, const B& a, const B& b) {
  return xsimd::select(c != B(0.f), a, b);  // NaN != 0: a NaN condition picks a
}

// Scalar twins: the one scalar meaning of each function lives in core/ops_scalar.hpp (the
// reference of every elementwise op, also read by the passes); the kernels' scalar tails and the
// references name them here.
using ops::scalar::cos_ref;
using ops::scalar::erf_ref;
using ops::scalar::gelu_ref;
using ops::scalar::gelu_tanh_ref;
using ops::scalar::logical_not_ref;
using ops::scalar::maximum_ref;
using ops::scalar::minimum_ref;
using ops::scalar::pow_ref;
using ops::scalar::relu_ref;
using ops::scalar::sigmoid_ref;
using ops::scalar::silu_ref;
using ops::scalar::sin_ref;
using ops::scalar::where_ref;

}  // namespace rungs::backend::cpu::vmath
