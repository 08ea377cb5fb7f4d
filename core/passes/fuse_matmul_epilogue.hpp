// core/passes/fuse_matmul_epilogue.hpp: fold bias, activation and residual add into the matmul that feeds them.
#pragma once

#include "core/ir/graph_impl.hpp"

namespace rungs::passes {

// Returns true when the graph changed.
bool fuse_matmul_epilogue(ir::GraphImpl& g);

}  // namespace rungs::passes
