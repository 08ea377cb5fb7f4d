// SPDX-License-Identifier: Apache-2.0
// Dispatch for the attention kernel (no ISA flags).
#include "backends/cpu/attention/attention.hpp"

#include "backends/cpu/rows/arch.hpp"

namespace rungs::backend::cpu {

std::unique_ptr<Kernel> make_attention_kernel(const KernelParams& params, Isa isa) {
  if (params.op != ops::Op::Attention) return nullptr;
  return dispatch_isa(isa, [&]<class A>() { return make_attention_for<A>(params); });
}

}  // namespace rungs::backend::cpu
