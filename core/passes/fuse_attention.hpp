// SPDX-License-Identifier: Apache-2.0
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
//   s = s + m | m + s             optional; m a constant of 0 and -inf that is exactly a causal
//                                 (bottom-right) triangle or a per-key mask, with no row fully masked
//   p = softmax(s, axis = -1)
//   o = matmul(p, v)              q, k, v with equal batch dims (no broadcasting)
// The rank-4 form becomes reshapes/transposes to [B, S, H*Dh] around an Attention with heads = H
// (skipping the ones that only undo the graph's own head split) and back to [B, H, Sq, Dv].
// Other additive masks are not matched: a finite "-1e9" or a run-time mask cannot be mapped
// exactly (a fully masked row gives NaN or a uniform average with primitives, zeros in Attention).
#pragma once

#include "core/ir/graph_impl.hpp"

namespace rungs::passes {

// Returns true when the graph changed.
bool fuse_attention(ir::GraphImpl& g);

}  // namespace rungs::passes
