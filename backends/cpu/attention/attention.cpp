// SPDX-License-Identifier: Apache-2.0
// Dispatch for the attention kernel (no ISA flags).
#include "backends/cpu/attention/attention.hpp"

#include "backends/cpu/rows/arch.hpp"

namespace rungs::backend::cpu {

AttentionParams attention_params(const ir::Node& node) {
  AttentionParams p;
  p.heads = node.heads;
  p.causal = node.causal;
  p.has_mask = node.has_mask;
  p.scale = node.scale;
  return p;
}

std::unique_ptr<Kernel> make_attention_kernel(const KernelSpec& spec, Isa isa) {
  if (spec.graph->at(spec.node).op != ir::Op::Attention) return nullptr;
  return dispatch_isa(isa, [&]<class A>() { return make_attention_for<A>(spec); });
}

}  // namespace rungs::backend::cpu
