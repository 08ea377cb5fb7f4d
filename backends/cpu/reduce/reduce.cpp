// SPDX-License-Identifier: Apache-2.0
// Dispatch and planning for the reduce kernel (no ISA flags).
#include "backends/cpu/reduce/reduce.hpp"

#include <algorithm>

#include "backends/cpu/rows/arch.hpp"

namespace rungs::backend::cpu {

ReducePlan plan_reduce(const Dims& in, std::span<const int64_t> axes) {
  std::vector<uint8_t> is_reduced(in.rank, 0);
  for (int64_t a : axes) is_reduced[a < 0 ? a + in.rank : a] = 1;
  ReducePlan p;
  int64_t stride = 1;
  // Innermost first, then reversed.
  for (int k = in.rank - 1; k >= 0; --k) {
    const int64_t n = in[k];
    if (is_reduced[k]) p.count *= n;
    else p.outputs *= n;
    if (n != 1) {
      if (!p.size.empty() && p.reduced.back() == is_reduced[k]) {
        p.size.back() *= n;
      } else {
        p.size.push_back(n);
        p.stride.push_back(stride);
        p.reduced.push_back(is_reduced[k]);
      }
    }
    stride *= n;
  }
  std::reverse(p.size.begin(), p.size.end());
  std::reverse(p.stride.begin(), p.stride.end());
  std::reverse(p.reduced.begin(), p.reduced.end());
  return p;
}

// Offsets of every combination of the groups selected by `pick` (outermost-first odometer order).
std::vector<int64_t> reduce_offsets(const ReducePlan& p, size_t groups, bool pick_reduced) {
  std::vector<int64_t> offs{0};
  for (size_t g = 0; g < groups; ++g) {
    if (p.reduced[g] != pick_reduced) continue;
    std::vector<int64_t> next;
    next.reserve(offs.size() * p.size[g]);
    for (int64_t o : offs)
      for (int64_t i = 0; i < p.size[g]; ++i) next.push_back(o + i * p.stride[g]);
    offs.swap(next);
  }
  return offs;
}

std::unique_ptr<Kernel> make_reduce_kernel(const KernelParams& params, Isa isa) {
  const ops::Op op = params.op;
  if (op != ops::Op::ReduceSum && op != ops::Op::ReduceMean && op != ops::Op::ReduceMax) return nullptr;
  return dispatch_isa(isa, [&]<class A>() { return make_reduce_for<A>(params); });
}

}  // namespace rungs::backend::cpu
