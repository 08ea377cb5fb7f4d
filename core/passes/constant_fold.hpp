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
#include <functional>
#include <vector>

#include "core/ir/graph_impl.hpp"

namespace rungs::passes {

constexpr int64_t kMaxFoldedElements = int64_t{1} << 20;

// The value of node `id` of `g`, whose inputs are all Constants: shape_numel(node.shape) floats.
// Passes do not run kernels themselves (they sit below the backends, docs/architecture.md):
// core/compile hands in an evaluator built on the reference backend, so folded and unfolded
// graphs compute the same numbers.
using ConstantEvaluator = std::function<std::vector<float>(const ir::GraphImpl& g, uint32_t id)>;

// Replaces each foldable node by a Constant holding evaluate(g, id). Returns true when the graph
// changed.
bool fold_constants(ir::GraphImpl& g, const ConstantEvaluator& evaluate);

}  // namespace rungs::passes
