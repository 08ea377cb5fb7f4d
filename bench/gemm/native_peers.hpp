// SPDX-License-Identifier: Apache-2.0
// bench/gemm/native_peers.hpp: what native_peers.cpp (built with -O3 -march=native) provides.
#pragma once

#include <cstdint>
#include <string>

namespace rungs::bench {

// c[m, n] = a[m, k] @ b[k, n], row-major, with Eigen 3.4 (single thread).
void eigen_gemm(const float* a, const float* b, float* c, int m, int k, int n);

// A register-only FMA loop at the widest vector of this machine: `iters` steps of kChains
// independent FMAs on fma_lanes() floats. Returns a value that depends on every FMA.
float fma_loop(int64_t iters);
int64_t fma_flops_per_iter();
std::string fma_arch_name();

}  // namespace rungs::bench
