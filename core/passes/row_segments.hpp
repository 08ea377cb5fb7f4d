// SPDX-License-Identifier: Apache-2.0
// core/passes/row_segments.hpp: runs of kernels that threads can split by rows, whole.
//
// Why: on two threads a short run (a sentence of 16 tokens) gains little when each kernel splits
// its own work. A kernel of a few microseconds pays a hand-over to the other thread and back, and
// reads rows the other core wrote last. Most of an encoder layer is row-local: row r of a
// projection, a norm, an activation or a residual add needs row r of its inputs and nothing else.
// Between two attentions every kernel is, so each thread can run the whole stretch on its own rows
// (rows 0-7 on one thread, 8-15 on the other) and meet the other once, at the end: one hand-over
// instead of eight, and each thread's rows stay in its own cache.
//
// A segment is a maximal run of consecutive kernel nodes (leaves and reshapes between them do not
// break it) that are row-local: elementwise ops, fused elementwise, layer/rms norms and fused
// add-norms not across rows, softmax not across rows, matrix products whose B carries no rows, and
// gathers by row-carrying ids. Rows are the axis active_extent.hpp tracks (the extent of an input's
// outermost non-1 axis), and each tensor must have nothing but 1s before it, so that a range of
// rows is one contiguous block of the same layout. A sum, mean or max over the rows (and nothing
// else) of a row-carrying value with more than one value a row joins the segment as its last node:
// each thread reduces its own rows in blocks and one adds the blocks up (Kernel::sum_row_blocks),
// so the rows never change cores (the encoder's pooling: 20 us on two threads against 10 on one
// at 256 tokens, when one thread read every row). Anything else (attention, transposes, slices,
// concats, products of two activations) ends a segment. A segment needs at least two kernels
// (one splits itself).
//
// The executor runs a segment by rows; the memory plan keeps every buffer a segment touches live
// for the whole segment (plan_memory's `segments`), since its threads run its kernels at once.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ir/graph_impl.hpp"

namespace rungs::passes {

struct RowSegment {
  uint32_t first = 0, last = 0;  // node indices, inclusive; both are kernel nodes
  bool reduces = false;          // `last` reduces its input's rows (to no rows)
};

struct RowSegments {
  std::vector<int> row_axis;  // per node: the axis carrying rows, or -1 (empty: no segments)
  std::vector<RowSegment> segments;
};

RowSegments find_row_segments(const ir::GraphImpl& g);

}  // namespace rungs::passes
