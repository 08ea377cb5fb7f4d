// SPDX-License-Identifier: Apache-2.0
// core/passes/memory_plan.hpp: one arena per compiled graph, buffers reused by liveness.
//
// Why: a transformer's intermediates are mostly short-lived (a projection is read by the next op
// and dead); giving each its own allocation multiplies memory by the depth of the graph. The plan
// gives every non-leaf node (and every input, copied in so kernels may read past its end) an
// offset in one arena; two buffers share bytes only when their live ranges do not overlap.
// Reshapes alias their source (no copy, no kernel).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/ir/graph_impl.hpp"
#include "core/passes/row_segments.hpp"

namespace rungs::passes {

struct MemoryPlan {
  static constexpr int64_t kNone = -1;
  std::vector<int64_t> offset;       // per node: arena offset in floats, or kNone (param/constant)
  std::vector<int64_t> floats;       // per node: buffer size in floats (0 for aliases and leaves)
  std::vector<uint32_t> root;        // per node: the node whose storage it uses (itself unless a reshape alias)
  std::vector<uint32_t> first_step;  // per node: index of the node that defines it (inputs: 0)
  std::vector<uint32_t> last_step;   // per node: last node index that reads it (outputs: the end)
  int64_t arena_floats = 0;          // the arena size
  int64_t unshared_floats = 0;       // the sum of all buffers, as if nothing were reused
};

// Plans `g` (nodes in topological order). Buffers are aligned to 16 floats (64 bytes).
// `segments` (row_segments.hpp) run their kernels at once on different rows: a buffer live at any
// point of one is live for all of it, so no two of them share bytes.
MemoryPlan plan_memory(const ir::GraphImpl& g, std::span<const RowSegment> segments = {});

// True when no two buffers with overlapping live ranges overlap in the arena (the plan's invariant;
// tests check it on real graphs).
bool plan_is_valid(const ir::GraphImpl& g, const MemoryPlan& plan);

}  // namespace rungs::passes
