// core/passes/fuse_attention.hpp: turn matmul(q, k^T) * scale -> softmax -> matmul(., v) into one
// attention node.
//
// Why: written with primitives, attention materializes the [S, S] score and probability tensors
// (quadratic memory, three kernels streaming them). The Attention op computes each query row's
// scores, softmax and value product together and never stores them.
//
// Matched, each intermediate read by nothing else:
//   s = matmul(q, transpose(k))   rank 3 [B, S, D] (heads = 1), or rank 4 [B, H, S, Dh]
//   s = s * c | c * s | s / c     optional; c a one-element constant (the scale; 1 when absent)
//   p = softmax(s, axis = -1)
//   o = matmul(p, v)              q, k, v with equal batch dims (no broadcasting)
// The rank-4 form becomes reshapes/transposes to [B, S, H*Dh] around an Attention with heads = H
// (skipping the ones that only undo the graph's own head split) and back to [B, H, Sq, Dv].
// Additive masks are not matched: a finite "-1e9" mask differs from a keep mask on rows where
// every key is masked, so no mask pattern maps exactly onto Attention's semantics.
#pragma once

#include "core/ir/graph_impl.hpp"

namespace rungs::passes {

// Returns true when the graph changed.
bool fuse_attention(ir::GraphImpl& g);

}  // namespace rungs::passes
