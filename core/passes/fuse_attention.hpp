// SPDX-License-Identifier: Apache-2.0
// core/passes/fuse_attention.hpp: turn matmul(q, k^T) * scale -> softmax -> matmul(., v) into one
// attention node.
//
// Why: written with primitives, attention materializes the [S, S] score and probability tensors
// (quadratic memory, three kernels streaming them). The Attention op computes each query row's
// scores, softmax and value product together and never stores them.
//
// Matched, each intermediate read by nothing else:
//   s = matmul(q, transpose(k))   rank 3 [B, S, D] (heads = 1), or rank 4 [B, H, S, Dh]; q may be
//                                 q' * c or q' / c (queries scaled first), folded into the scale
//   s = s * c | c * s | s / c     optional; c a one-element constant (the scale; 1 when absent)
//   s = s + m | m + s             optional; m a constant of 0 and -inf that is exactly a causal
//                                 (bottom-right) triangle or a per-key mask, with no row fully masked;
//                                 or m computed at run time from a key mask input (below);
//                                 or s = where(cond, s, c) | where(cond, c, s), c a one-element
//                                 constant <= -1e4, cond computed from a key mask input (below)
//   p = softmax(s, axis = -1)
//   o = matmul(p, v)              q, k, v with equal batch dims (no broadcasting)
// The rank-4 form becomes reshapes/transposes to [B, S, H*Dh] around an Attention with heads = H
// (skipping the ones that only undo the graph's own head split) and back to [B, H, Sq, Dv]; when
// the graph's own transpose back to [B, Sq, H, Dv] reads o, the two cancel (no transpose is left).
//
// A run-time m (the "extended attention mask" of exported BERTs: (1 - mask) * -10000, or
// * finfo.min), after any ONNX Expand (an add of zeros or a multiply by ones), is f(mask) for one
// graph input of B * Sk values, through reshapes and elementwise
// ops with one-element constants, broadcast over heads and queries only ([B, 1, 1, Sk]). Evaluated
// at 0 and 1: f(1) == 0 and f(0) <= -1e4 makes the input the key mask; f(0) == 0 and f(1) <= -1e4
// makes 1 - input the key mask. A where keeps the keys where it selects the scores: cond evaluated
// at 0 and 1 likewise (not(mask == 0) for the sentence encoders' torch.where, expand(mask == 0) for
// DistilBERT's masked_fill). This assumes the input holds 0 and 1 and keeps at least one key per
// batch row, as attention masks do: the fused op keeps keys where the mask is >= 0.5 and outputs
// zeros for a row without keys, where the primitives give an average or NaN.
// Other constant masks are not matched: a finite "-1e9" constant cannot be mapped exactly (a fully
// masked row gives NaN or a uniform average with primitives, zeros in Attention).
#pragma once

#include "core/ir/graph_impl.hpp"

namespace rungs::passes {

// Returns true when the graph changed.
bool fuse_attention(ir::GraphImpl& g);

}  // namespace rungs::passes
