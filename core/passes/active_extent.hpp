// SPDX-License-Identifier: Apache-2.0
// core/passes/active_extent.hpp: can this compiled graph run at fewer rows than it was built for?
//
// Why: a bucket compiled at extent E serves every key up to E; padding a 19-token request to 32
// wastes 13 rows of compute in every op. When every op is row-local along the bucket axis, the same
// kernels can simply run on the real rows ("active extent"): the executor shrinks that axis in every
// node's runtime dims and nothing is padded at all.
//
// The analysis tracks, per node, the axis that carries the bucket's rows (or none) and whether the
// node is zero in padded rows (inputs are padded with zeros, and products, relu, gelu ... of zeros
// stay zero). It accepts:
//   - elementwise ops, softmax/norms over other axes, matmuls with rows on M or a batch axis,
//     transposes, reshapes that keep rows contiguous, slices/concats off the row axis, gather by
//     row-carrying ids;
//   - a sum over the row axis of a value that is zero in padded rows (masked mean pooling);
//   - attention whose keys carry rows only when padded keys are dropped anyway: a key mask that is
//     zero in padded rows, or causal self-attention (query i never sees a key after i).
// Anything else (mean or max over rows, a param with the extent as a dimension, a slice across
// rows, ...) is refused with a reason naming the node, and the cache falls back to padding.
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
  std::vector<int> row_axis;   // per node: the axis carrying rows, or -1
};

ActiveRows analyze_active_rows(const ir::GraphImpl& g, int64_t extent);

}  // namespace rungs::passes
