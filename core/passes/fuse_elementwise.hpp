// SPDX-License-Identifier: Apache-2.0
// core/passes/fuse_elementwise.hpp: merge single-consumer trees of elementwise ops into one loop.
//
// Why: each primitive elementwise op is a full pass over memory; a chain such as
// `div(total, maximum(count, 1e-6))` or `x * sigmoid(x) + b` costs one read of every input and one
// write when it runs as a single FusedElementwise loop that evaluates a small register program
// per output element.
//
// A tree is an elementwise root (an op whose result is read by a non-elementwise op, by two
// readers, or by an output) plus every elementwise operand read only by the tree, transitively.
// Its external inputs become registers 0..n-1 (each distinct node once), scalar constants become
// immediates, and every input broadcasts to the root's shape, which the fused node keeps. A lone
// op stays primitive unless it gains an immediate. Ops already absorbed into FusedMatMul or
// FusedAddNorm are no longer elementwise, so this pass runs last and leaves them alone.
#pragma once

#include "core/ir/graph_impl.hpp"

namespace rungs::passes {

// Returns true when the graph changed.
bool fuse_elementwise(ir::GraphImpl& g);

}  // namespace rungs::passes
