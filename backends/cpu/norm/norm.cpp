// SPDX-License-Identifier: Apache-2.0
// Dispatch for the norm kernel (no ISA flags).
#include "backends/cpu/norm/norm.hpp"

#include "backends/cpu/rows/arch.hpp"

namespace rungs::backend::cpu {

NormParams norm_params(const ir::Node& node) {
  NormParams p;
  p.add = node.op == ir::Op::FusedAddNorm;
  const ir::Op norm = p.add ? node.norm : node.op;
  p.rms = norm == ir::Op::RmsNorm;
  p.has_beta = !p.rms;
  p.eps = node.eps;
  return p;
}

std::unique_ptr<Kernel> make_norm_kernel(const KernelSpec& spec, Isa isa) {
  const ir::Op op = spec.graph->at(spec.node).op;
  if (op != ir::Op::LayerNorm && op != ir::Op::RmsNorm && op != ir::Op::FusedAddNorm) return nullptr;
  return dispatch_isa(isa, [&]<class A>() { return make_norm_for<A>(spec); });
}

}  // namespace rungs::backend::cpu
