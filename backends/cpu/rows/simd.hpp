// SPDX-License-Identifier: Apache-2.0
// backends/cpu/rows/simd.hpp: small helpers the row kernels share, all templates over the xsimd
// arch (so each ISA's TU gets its own copy and nothing compiled with wider flags leaks across).
//
// Reads: every kernel buffer may be read up to kReadPastBytes past its logical end
// (backends/kernel.hpp), so a row's tail is *loaded* as a full batch whose extra lanes are never
// used. Writes: a row's tail is *stored* exactly (store_tail), never past the logical end.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include <xsimd/xsimd.hpp>

#include "backends/cpu/rows/vmath.hpp"
#include "backends/kernel.hpp"

namespace rungs::backend::cpu {

template <class A>
using vfloat = xsimd::batch<float, A>;

static_assert(sizeof(float) * 16 <= kReadPastBytes, "a full AVX-512 batch may be read past a row's end");

// Store the first n (< batch size) lanes of v.
template <class A>
inline void store_tail(float* dst, const vfloat<A>& v, size_t n) {
  alignas(64) float tmp[vfloat<A>::size];
  v.store_aligned(tmp);
  std::memcpy(dst, tmp, n * sizeof(float));
}

// Lanes i >= n of v replaced by fill (for reductions over a loaded tail).
template <class A>
inline vfloat<A> keep_first(const vfloat<A>& v, size_t n, float fill) {
  alignas(64) float idx[vfloat<A>::size];
  for (size_t i = 0; i < vfloat<A>::size; ++i) idx[i] = static_cast<float>(i);
  auto lane = vfloat<A>::load_aligned(idx);
  return xsimd::select(lane < vfloat<A>(static_cast<float>(n)), v, vfloat<A>(fill));
}

// Sum and max of a contiguous run of n floats (tail lanes excluded; a NaN gives a NaN max).
template <class A>
inline float row_sum(const float* x, size_t n) {
  using B = vfloat<A>;
  constexpr size_t W = B::size;
  B acc0(0.f), acc1(0.f);
  size_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    acc0 += B::load_unaligned(x + i);
    acc1 += B::load_unaligned(x + i + W);
  }
  for (; i + W <= n; i += W) acc0 += B::load_unaligned(x + i);
  if (i < n) acc1 += keep_first<A>(B::load_unaligned(x + i), n - i, 0.f);
  return xsimd::reduce_add(acc0 + acc1);
}

template <class A>
inline float row_max(const float* x, size_t n) {
  using B = vfloat<A>;
  constexpr size_t W = B::size;
  constexpr float lo = -std::numeric_limits<float>::infinity();
  B acc(lo);
  size_t i = 0;
  for (; i + W <= n; i += W) acc = vmath::maximum(acc, B::load_unaligned(x + i));
  if (i < n) acc = vmath::maximum(acc, keep_first<A>(B::load_unaligned(x + i), n - i, lo));
  return vmath::reduce_maximum(acc);
}

// Rows below this many floats of work per chunk are not worth waking another thread for.
constexpr int64_t kParallelGrainFloats = int64_t{1} << 14;

// Grain (in items) for parallel_for when each item touches `floats_per_item` floats.
static inline int64_t grain_for(int64_t floats_per_item) {
  return std::max<int64_t>(1, kParallelGrainFloats / std::max<int64_t>(1, floats_per_item));
}

}  // namespace rungs::backend::cpu
