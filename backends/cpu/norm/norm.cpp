// SPDX-License-Identifier: Apache-2.0
// Dispatch for the norm kernel (no ISA flags).
#include "backends/cpu/norm/norm.hpp"

#include "backends/cpu/rows/arch.hpp"

namespace rungs::backend::cpu {

std::unique_ptr<Kernel> make_norm_kernel(const KernelParams& params, Isa isa) {
  const ops::Op op = params.op;
  if (op != ops::Op::LayerNorm && op != ops::Op::RmsNorm && op != ops::Op::FusedAddNorm) return nullptr;
  return dispatch_isa(isa, [&]<class A>() { return make_norm_for<A>(params); });
}

}  // namespace rungs::backend::cpu
