// SPDX-License-Identifier: Apache-2.0
// bench/gemm/native_peers.hpp: the GEMM benchmark's peers for one ISA, in a module of their own.
//
// native_peers.cpp is built once per ISA (librungs_gemm_peers_<isa>.so, each with only that ISA's
// flags, symbols hidden but the C entry points below) and loaded with dlopen(RTLD_LOCAL), so that
// Eigen's inline templates compiled for avx512 and for avx2 never meet in one link (they would
// violate the one-definition rule and the linker would keep one ISA's copy for both). The
// benchmark forces rungs to an ISA and loads the module of the same ISA: peers are compared at
// the vector width rungs runs at.
#pragma once

#include <cstdint>
#include <string>

#include "backends/cpu/isa.hpp"

namespace rungs::bench {

struct NativePeers {
  // c[m, n] = a[m, k] @ b[k, n], row-major, with Eigen 3.4 (single thread).
  void (*eigen_gemm)(const float* a, const float* b, float* c, int m, int k, int n);
  // A register-only FMA loop at this ISA's vector width: `iters` steps of independent FMA chains.
  // Returns a value that depends on every FMA.
  float (*fma_loop)(int64_t iters);
  int64_t (*fma_flops_per_iter)();
  const char* (*arch_name)();
};

// Loads the module for `isa` from the folder of the running executable; exits with a message if
// it is missing.
NativePeers load_native_peers(backend::cpu::Isa isa);

// OpenBLAS' kernels for an ISA (OPENBLAS_CORETYPE): SkylakeX, Haswell or Nehalem.
const char* openblas_coretype(backend::cpu::Isa isa);

}  // namespace rungs::bench
