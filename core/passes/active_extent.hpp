// SPDX-License-Identifier: Apache-2.0
// core/passes/active_extent.hpp: can this compiled graph run at fewer rows than it was built for?
//
// Why: a bucket compiled at extent E serves every key up to E; padding a 19-token request to 32
// wastes 13 rows of compute in every op. When every op is row-local along the bucket axis, the same
// kernels can simply run on the real rows ("active extent"): the executor shrinks that axis in every
// node's runtime dims and nothing is padded at all.
//
// A run at r rows computes the graph as if it were compiled at r (every kernel gets the runtime
// dims). The analysis tracks, per node, the axis that carries the bucket's rows (or none) and
// whether the node is zero in padded rows (inputs are padded with zeros, and products, relu,
// gelu ... of zeros stay zero). It accepts:
//   - elementwise ops, softmax/norms over other axes, matmuls with rows on M or a batch axis,
//     transposes, reshapes that keep rows contiguous, slices/concats off the row axis, gather by
//     row-carrying ids;
//   - a prefix slice slice(t, axis, 0, E) of a value without rows, along its outermost non-1 axis
//     (position embeddings): it carries rows; a slice of the first row across rows (first token);
//   - a mean or max over the row axis (the kernel divides by the runtime rows), and a sum over it
//     of a value that is zero in padded rows (masked mean pooling);
//   - attention whose keys carry rows (the kernel sees only the runtime keys), with a key mask
//     that carries rows or none.
// Anything else (a sum over rows of a value that is not zero there, a param with the extent as a
// dimension, a slice across rows past the first, ...) is refused with a reason naming the node,
// and the cache falls back to padding. Where an accepted node makes the run at r differ from the
// padded run's real rows (a plain mean, attention without a key mask that is zero in padded rows),
// differs_from_padding names it: the run at r is then the exact result, padding is not.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/graph_impl.hpp"

namespace rungs::passes {

struct ActiveRows {
  int64_t extent = 0;
  bool supported = false;
  std::string reason;          // why not, when unsupported
  // When supported: empty if the run at r rows equals the padded run's real rows; else the first
  // node where padding reaches real rows (a plain mean over rows, attention without a key mask).
  // The run at r rows is then the exact result (the graph as if compiled at r), padding is not.
  std::string differs_from_padding;
  std::vector<int> row_axis;   // per node: the axis carrying rows, or -1
};

ActiveRows analyze_active_rows(const ir::GraphImpl& g, int64_t extent);

}  // namespace rungs::passes
