// SPDX-License-Identifier: Apache-2.0
// backends/cpu/softmax/softmax.hpp: softmax along any axis, numerically stable (max subtracted).
//
// The tensor is viewed as [outer, n, inner] around the axis. Last axis (inner == 1): each row in
// three passes (max; exp, store and sum; scale), the row staying in L1. Other axes: W columns of
// `inner` at a time, walking the axis with strided loads. Rows (or column blocks) are split
// across threads; a row is always computed by one thread, so results do not depend on threads.
// A row that is all -inf gives NaN, as in the reference.
#pragma once

#include <memory>
#include <span>

#include "backends/cpu/isa.hpp"
#include "backends/kernel.hpp"

namespace rungs::backend::cpu {

// axis in [0, rank) (SoftmaxParams).
void softmax_reference(int axis, const TensorArg& x, float* out);

template <class Arch>
std::unique_ptr<Kernel> make_softmax_for(const KernelParams& params);
std::unique_ptr<Kernel> make_softmax_kernel(const KernelParams& params, Isa isa);

}  // namespace rungs::backend::cpu
