// SPDX-License-Identifier: Apache-2.0
// backends/cpu/gemm/reference.hpp: the scalar GEMM the vector kernel is tested (and benchmarked)
// against. Accumulates in double, so it is the more accurate of the two.
#pragma once

#include <cstdint>

#include "rungs/types.hpp"

namespace rungs::backend::cpu::gemm {

double reference_activation(Activation act, double x);

// c[m, n] = act(a[m, k] @ b[k, n] + bias[n]) + residual[m, n]; bias and residual may be null.
// b_transposed: b holds B transposed, [n, k] row-major.
void reference_gemm(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n,
                    const float* bias = nullptr, Activation act = Activation::None,
                    const float* residual = nullptr, bool b_transposed = false);

}  // namespace rungs::backend::cpu::gemm
