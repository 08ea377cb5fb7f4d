// core/passes/constant_fold.hpp: evaluate nodes whose inputs are all constants at compile time.
#pragma once

#include "core/ir/graph_impl.hpp"

namespace rungs::passes {

// Returns true when the graph changed.
bool fold_constants(ir::GraphImpl& g);

}  // namespace rungs::passes
