// SPDX-License-Identifier: Apache-2.0
// Dispatch for the gather kernel (no ISA flags).
#include "backends/cpu/gather/gather.hpp"

#include <cmath>

#include "backends/cpu/rows/arch.hpp"

namespace rungs::backend::cpu {

std::optional<int64_t> gather_row(float id, int64_t rows) {
  const float r = std::nearbyint(id);
  if (!(r >= 0.f && r < static_cast<float>(rows))) return std::nullopt;  // NaN fails both
  return static_cast<int64_t>(r);
}

std::unique_ptr<Kernel> make_gather_kernel(const KernelParams& params, Isa isa) {
  if (params.op != ops::Op::Gather) return nullptr;
  return dispatch_isa(isa, [&]<class A>() { return make_gather_for<A>(params); });
}

}  // namespace rungs::backend::cpu
