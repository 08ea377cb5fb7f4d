// SPDX-License-Identifier: Apache-2.0
// The GEMM benchmark's peers for one ISA (see native_peers.hpp): Eigen's GEMM and the register-only
// FMA loop that measures the peak, compiled with the flags of RUNGS_PEERS_ISA only.
#include <cstdint>

#include <Eigen/Core>
#include <xsimd/xsimd.hpp>

namespace {
using Batch = xsimd::batch<float>;  // the widest architecture this TU's flags allow
// Independent accumulators: more than FMA latency x FMA pipes (10 on Zen 2 and Skylake), and
// with the two constants no more than the vector registers (16 below AVX-512: 16 chains there
// spilled to the stack and measured 58 of about 100 GFLOP/s on an AVX2 EPYC).
constexpr int kChains = Batch::size >= 16 ? 16 : 12;

void eigen_gemm(const float* a, const float* b, float* c, int m, int k, int n) {
  using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const Mat> A(a, m, k), B(b, k, n);
  Eigen::Map<Mat> C(c, m, n);
  C.noalias() = A * B;
}

float fma_loop(int64_t iters) {
  Batch acc[kChains];
  for (int j = 0; j < kChains; ++j) acc[j] = Batch(1.f + 0.001f * j);
  const Batch mul(0.999999f), add(1e-7f);
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < kChains; ++j) acc[j] = xsimd::fma(acc[j], mul, add);
  }
  Batch sum(0.f);
  for (int j = 0; j < kChains; ++j) sum += acc[j];
  return xsimd::reduce_add(sum);
}

int64_t fma_flops_per_iter() { return int64_t{kChains} * static_cast<int64_t>(Batch::size) * 2; }

const char* arch_name() { return Batch::arch_type::name(); }

}  // namespace

extern "C" [[gnu::visibility("default")]] void rungs_gemm_peers(void** table) {
  table[0] = reinterpret_cast<void*>(&eigen_gemm);
  table[1] = reinterpret_cast<void*>(&fma_loop);
  table[2] = reinterpret_cast<void*>(&fma_flops_per_iter);
  table[3] = reinterpret_cast<void*>(&arch_name);
}
