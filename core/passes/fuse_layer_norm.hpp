// SPDX-License-Identifier: Apache-2.0
// core/passes/fuse_layer_norm.hpp: recognise layer norm and rms norm written with primitives (as
// ONNX exporters write them) and turn each into one LayerNorm / RmsNorm node.
//
// Why: PyTorch exports nn.LayerNorm below opset 17, and hand-written norms at every opset, as
// eight or nine primitive ops, each a full pass over the activations. The row kernel reads x once
// and writes the result once.
//
// Matched over the last axis of x (rank >= 1), each intermediate read by nothing else:
//   m = mean(x, -1, keep_dims)              layer norm only
//   d = x - m                               layer norm; for rms norm d is x itself
//   q = d * d | pow(d, 2)
//   v = mean(q, -1, keep_dims) [+ eps | eps +]   eps a one-element constant, finite, >= 0 (0 when absent)
//   n = d / sqrt(v) | d * rsqrt(v) | rsqrt(v) * d | d * (1 / sqrt(v)) | (1 / sqrt(v)) * d
//   n = n * gamma | gamma * n               optional; gamma [D] or [1, ..., 1, D]
//   n = n + beta | beta + n                 optional, layer norm only; beta [D] or [1, ..., 1, D]
// A missing gamma is a constant of ones, a missing beta one of zeros.
#pragma once

#include "core/ir/graph_impl.hpp"

namespace rungs::passes {

// Returns true when the graph changed.
bool fuse_layer_norm(ir::GraphImpl& g);

}  // namespace rungs::passes
