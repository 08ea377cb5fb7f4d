// SPDX-License-Identifier: Apache-2.0
// core/passes/fuse_add_norm.hpp: fold a residual add into the layer/rms norm that reads it.
//
// Why: in a transformer block `norm(x + y)` writes the sum to memory only for the norm to read it
// straight back. FusedAddNorm adds and normalizes each row in one pass. Matched when the add has
// no broadcasting (both operands have the add's shape) and the norm is its only consumer.
#pragma once

#include "core/ir/graph_impl.hpp"

namespace rungs::passes {

// Returns true when the graph changed.
bool fuse_add_norm(ir::GraphImpl& g);

}  // namespace rungs::passes
