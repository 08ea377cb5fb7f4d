// SPDX-License-Identifier: Apache-2.0
// core/passes/constant_fold.hpp: evaluate nodes whose inputs are all constants at compile time.
//
// Why: builders and lowerings produce arithmetic on constants (a scale computed as 1/sqrt(d), a
// mask reshaped or negated, an epsilon broadcast); running it once at compile time removes kernels
// and arena bytes from every run, and leaves scalar constants the fusion passes can turn into
// immediates. Results larger than kMaxFoldedElements are left alone (they would bloat the
// compiled graph more than they save).
#pragma once

#include <cstdint>

#include "core/ir/graph_impl.hpp"

namespace rungs::passes {

constexpr int64_t kMaxFoldedElements = int64_t{1} << 20;

// Replaces each foldable node by a Constant (evaluated with the reference kernels, so folded and
// unfolded graphs compute the same numbers). Returns true when the graph changed.
bool fold_constants(ir::GraphImpl& g);

}  // namespace rungs::passes
