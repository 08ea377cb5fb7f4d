// SPDX-License-Identifier: Apache-2.0
// Dispatch for the softmax kernel (no ISA flags).
#include "backends/cpu/softmax/softmax.hpp"

#include "backends/cpu/rows/arch.hpp"

namespace rungs::backend::cpu {

int softmax_axis(const ir::Node& node) {
  const int rank = static_cast<int>(node.shape.size());
  int axis = node.ints.empty() ? -1 : static_cast<int>(node.ints[0]);
  return axis < 0 ? axis + rank : axis;
}

std::unique_ptr<Kernel> make_softmax_kernel(const KernelSpec& spec, Isa isa) {
  if (spec.graph->at(spec.node).op != ir::Op::Softmax) return nullptr;
  return dispatch_isa(isa, [&]<class A>() { return make_softmax_for<A>(spec); });
}

}  // namespace rungs::backend::cpu
