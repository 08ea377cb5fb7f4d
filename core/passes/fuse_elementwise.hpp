// core/passes/fuse_elementwise.hpp: merge single-consumer chains of elementwise ops into one loop.
#pragma once

#include "core/ir/graph_impl.hpp"

namespace rungs::passes {

// Returns true when the graph changed.
bool fuse_elementwise(ir::GraphImpl& g);

}  // namespace rungs::passes
