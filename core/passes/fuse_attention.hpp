// core/passes/fuse_attention.hpp: turn matmul(q, k^T) * scale -> softmax -> matmul(., v) into one attention node.
#pragma once

#include "core/ir/graph_impl.hpp"

namespace rungs::passes {

// Returns true when the graph changed.
bool fuse_attention(ir::GraphImpl& g);

}  // namespace rungs::passes
