// SPDX-License-Identifier: Apache-2.0
// core/passes/dead_code.hpp: remove nodes no output depends on, and renumber.
//
// Why: builders leave unused values behind (a block's intermediate nobody read, a node a fusion
// pass replaced); each would otherwise get a kernel and arena bytes. Inputs and params are kept
// even when unused, so a compiled graph's input and param names are the ones the user declared.
#pragma once

#include "core/ir/graph_impl.hpp"

namespace rungs::passes {

// Returns true when a node was removed.
bool eliminate_dead_code(ir::GraphImpl& g);

}  // namespace rungs::passes
