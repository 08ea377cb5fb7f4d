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
  std::vector<int64_t> offset;       // per node: arena (or region) offset in floats, or kNone (param/constant)
  std::vector<int64_t> floats;       // per node: buffer size in floats (0 for aliases and leaves)
  std::vector<uint32_t> root;        // per node: the node whose storage it uses (itself unless a reshape alias)
  std::vector<uint32_t> first_step;  // per node: index of the node that defines it (inputs: 0)
  std::vector<uint32_t> last_step;   // per node: last node index that reads it (outputs: the end)
  int64_t arena_floats = 0;          // the arena size
  int64_t unshared_floats = 0;       // the sum of all buffers, as if nothing were reused
  // Per node: the buffer lives in the row regions, not the arena (see plan_memory).
  std::vector<uint8_t> in_regions;
  int64_t region_floats = 0;  // the size of each region (0: no buffer lives in them)

  bool regional(uint32_t node) const { return !in_regions.empty() && in_regions[root[node]]; }
  // The workspace a run on `threads` threads needs: the arena and, with split rows, one region for
  // each thread's range.
  int64_t workspace_floats(int threads) const { return arena_floats + (region_floats > 0 ? threads : 0) * region_floats; }
};

// Plans `g` (nodes in topological order). Buffers are aligned to 16 floats (64 bytes).
// `segments` (row_segments.hpp) run their kernels at once on different rows: a buffer live at any
// point of one is live for all of it, so no two of them share bytes.
MemoryPlan plan_memory(const ir::GraphImpl& g, std::span<const RowSegment> segments = {});

// The same with the row regions: a buffer that only row segments write and read, each thread its
// own range of rows (row-local kernels, no graph output), is planned in a region instead of the
// arena, and a run split by rows gives each thread a region of its own: thread t's rows of such a
// buffer sit at their usual place in region t, and no other thread ever touches those bytes.
// Unsplit runs (one thread, too few rows) use region 0 for all rows. Within a region one thread
// runs the kernels in order, so its buffers are planned by plain liveness, without the segments'
// rule.
//
// Why: with one arena, bytes change threads. Buffers of other widths reuse them (row r of one is
// not row r of the next), and q, k, v and the attention output are read by both threads, so each
// run's next write to those bytes waits for the other core to give its copy up. On two cores that
// are far apart (a 2-vCPU VM whose round trip between cores is 450 ns), the encoder at 256 tokens
// spent 14 us of a 4 us layer norm doing so (docs/results-threads.md).
MemoryPlan plan_memory(const ir::GraphImpl& g, const RowSegments& rows);

// True when no two buffers with overlapping live ranges overlap in the arena (the plan's invariant;
// tests check it on real graphs).
bool plan_is_valid(const ir::GraphImpl& g, const MemoryPlan& plan);

}  // namespace rungs::passes
