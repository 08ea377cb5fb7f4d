// SPDX-License-Identifier: Apache-2.0
// core/passes/scalar_eval.hpp: evaluate a small tree of elementwise ops on one scalar, in double.
//
// Why: some patterns are easiest to recognise by what they compute rather than by how they are
// spelled. An exporter writes GELU or an attention mask's "(1 - m) * -10000" in many operand orders
// and associations; a pass that collects the tree of elementwise ops over one leaf can evaluate it
// at a few points and compare with the function it means (fuse_activation, fuse_attention).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/ir/graph_impl.hpp"

namespace rungs::passes {

// The value of one elementwise op (unary: args[0]; binary: args[0], args[1]; where: cond, a, b)
// as the reference defines it (core/ops_scalar.hpp, evaluated in double), or nothing for an op
// that is not elementwise (a reshape passes its input through).
std::optional<double> eval_op(ir::Op op, const std::vector<double>& args);

// Evaluates `tree` (node ids in a valid evaluation order, the last one the result) with `leaf`
// set to `value`. Every input of a tree node must be the leaf, a one-element constant or an
// earlier tree node; reshapes pass their input through. Nothing when an op is unknown.
std::optional<double> eval_tree(const ir::GraphImpl& g, const std::vector<uint32_t>& tree, uint32_t leaf,
                                double value);

}  // namespace rungs::passes
