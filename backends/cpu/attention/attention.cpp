// SPDX-License-Identifier: Apache-2.0
// Dispatch for the attention kernel (no ISA flags).
#include "backends/cpu/attention/attention.hpp"

#include <algorithm>

#include "backends/cpu/rows/arch.hpp"
#include "backends/cpu/rows/simd.hpp"

namespace rungs::backend::cpu {

std::unique_ptr<Kernel> make_attention_kernel(const KernelParams& params, Isa isa) {
  if (params.op != ops::Op::Attention) return nullptr;
  return dispatch_isa(isa, [&]<class A>() { return make_attention_for<A>(params); });
}

int64_t attention_task_grain(int64_t sq, int64_t sk, int64_t dh) {
  return grain_for(std::min(sq, kAttentionQueryBlock) * sk * dh / 4);
}

}  // namespace rungs::backend::cpu
