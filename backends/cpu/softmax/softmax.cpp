// SPDX-License-Identifier: Apache-2.0
// Dispatch for the softmax kernel (no ISA flags).
#include "backends/cpu/softmax/softmax.hpp"

#include "backends/cpu/rows/arch.hpp"

namespace rungs::backend::cpu {

std::unique_ptr<Kernel> make_softmax_kernel(const KernelParams& params, Isa isa) {
  if (params.op != ops::Op::Softmax) return nullptr;
  return dispatch_isa(isa, [&]<class A>() { return make_softmax_for<A>(params); });
}

}  // namespace rungs::backend::cpu
