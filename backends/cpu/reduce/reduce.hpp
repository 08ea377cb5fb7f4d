// SPDX-License-Identifier: Apache-2.0
// backends/cpu/reduce/reduce.hpp: ReduceSum / ReduceMean / ReduceMax over any set of axes.
//
// At run time the input is collapsed into alternating groups of kept and reduced axes (size-1 axes
// dropped, neighbours of one kind merged). If the innermost group is reduced, every output is a
// sum (or max) of contiguous runs, accumulated in batches then reduced horizontally. If it is
// kept, every output row is a vertical sum of contiguous runs, in column tiles of
// 4 batches held in registers across the reduced runs. Outputs (or output column tiles) are split
// across threads; each output is computed by one thread in a fixed order, so results do not
// depend on threads. An empty reduction gives 0 (sum), NaN (mean) and -inf (max).
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "backends/cpu/isa.hpp"
#include "backends/kernel.hpp"

namespace rungs::backend::cpu {

// The collapsed view of one run: groups outermost first.
struct ReducePlan {
  std::vector<int64_t> size, stride;  // per group, stride in input elements
  std::vector<uint8_t> reduced;       // per group
  int64_t count = 1;                  // elements reduced into each output
  int64_t outputs = 1;
};
ReducePlan plan_reduce(const Dims& in, std::span<const int64_t> axes);
// Input offsets of every index combination of the first `groups` groups that are (pick_reduced)
// reduced or kept, outermost group slowest (for kept groups: the output order).
std::vector<int64_t> reduce_offsets(const ReducePlan& p, size_t groups, bool pick_reduced);

void reduce_reference(ReduceKind kind, std::span<const int64_t> axes, const TensorArg& x, float* out);

template <class Arch>
std::unique_ptr<Kernel> make_reduce_for(const KernelParams& params);
std::unique_ptr<Kernel> make_reduce_kernel(const KernelParams& params, Isa isa);

}  // namespace rungs::backend::cpu
