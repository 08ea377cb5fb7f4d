// core/passes/fuse_add_norm.hpp: fold a residual add into the layer/rms norm that reads it.
#pragma once

#include "core/ir/graph_impl.hpp"

namespace rungs::passes {

// Returns true when the graph changed.
bool fuse_add_norm(ir::GraphImpl& g);

}  // namespace rungs::passes
