// SPDX-License-Identifier: Apache-2.0
// backends/cpu/norm/norm.hpp: LayerNorm and RmsNorm over the last axis, and FusedAddNorm
// (norm(a + b), the residual add never stored separately).
//
// Inputs: LayerNorm x, gamma, beta; RmsNorm x, gamma; FusedAddNorm a, b, gamma, [beta]
// (NormParams, backends/kernel.hpp, says which). Each row of D floats is read in three L1-resident passes (mean,
// centred variance or mean square, scale); for FusedAddNorm every pass re-adds a + b rather than
// re-reading a stored sum, so no pass reads past its own row of the output (another thread's).
// Rows are split across threads; one row is one thread's, so results do not depend on threads.
#pragma once

#include <memory>
#include <span>

#include "backends/cpu/isa.hpp"
#include "backends/kernel.hpp"

namespace rungs::backend::cpu {

void norm_reference(const NormParams& p, std::span<const TensorArg> in, float* out, const Dims& out_dims);

template <class Arch>
std::unique_ptr<Kernel> make_norm_for(const KernelParams& params);
std::unique_ptr<Kernel> make_norm_kernel(const KernelParams& params, Isa isa);

}  // namespace rungs::backend::cpu
