// SPDX-License-Identifier: Apache-2.0
// core/passes/verify.hpp: check the IR's invariants between passes.
//
// Why: a pass that breaks topological order, a shape, or an input count would otherwise surface
// as a wrong number far away in a kernel. verify() fails fast with Error(Internal) naming the node.
#pragma once

#include "core/ir/graph_impl.hpp"

namespace rungs::passes {

void verify(const ir::GraphImpl& g);

}  // namespace rungs::passes
