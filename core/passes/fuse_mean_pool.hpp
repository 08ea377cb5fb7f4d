// SPDX-License-Identifier: Apache-2.0
// core/passes/fuse_mean_pool.hpp: rewrite masked mean pooling as exporters write it into the form
// HirModule::mean_pool lowers to.
//
// Why: sentence-transformers pools with
//   e = mask[..., None].expand(x.size()).float()
//   sum(x * e, 1) / clamp(e.sum(1), min=1e-9)
// which an ONNX import turns into a materialised [B, S, D] copy of the mask (Expand: an add of a
// [B, S, D] constant of zeros, itself stored in the compiled graph) and a count summed D times
// over. Broadcasting the [B, S, 1] mask instead gives the same values with neither:
//   sum(x * m, 1) / maximum(sum(m, 1), c)     m [B, S, 1], the count [B, 1]
//
// Matched, each intermediate read by nothing else (e by exactly the product and the count):
//   e = m + Z | Z + m | m * O | O * m    m [B, S, 1]; Z a constant of zeros, O of ones, [B, S, D]
//   t = sum(x * e | e * x, axis 1)        x [B, S, D], keep_dims off
//   n = sum(e, axis 1)
//   n = maximum(n, c) | maximum(c, n)     c a one-element constant (Clip's min)
//   y = t / n
#pragma once

#include "core/ir/graph_impl.hpp"

namespace rungs::passes {

// Returns true when the graph changed.
bool fuse_mean_pool(ir::GraphImpl& g);

}  // namespace rungs::passes
