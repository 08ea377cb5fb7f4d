// SPDX-License-Identifier: Apache-2.0
// core/passes/fuse_activation.hpp: recognise GELU (erf and tanh forms) and SiLU written with
// primitives, as ONNX exporters write them, and turn each into one activation node.
//
// Why: an exported `F.gelu` is Div, Erf, Add, Mul, Mul (the tanh form nine ops); as an activation
// node it joins the matmul epilogue (fuse_matmul_epilogue runs after this pass) instead of
// streaming the [M, N] tensor through five to nine loops.
//
// Matched: a Mul or Div root and the tree below it of elementwise ops (add, sub, mul, div, neg,
// pow, erf, tanh, sigmoid, exp) whose leaves are one tensor x of the root's shape and one-element
// constants, every node of the tree (but the root) read only by the tree, at most 16 nodes, and
// at least one of erf, tanh, sigmoid or exp. Whatever the exporter's operand order or association,
// the tree is then a function of x alone, evaluated (in double) at 12 points in [-4.1, 3.8]; it
// becomes
//   gelu(x)       when it equals x/2 * (1 + erf(x / sqrt 2)),
//   gelu_tanh(x)  when it equals x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))),
//   silu(x)       when it equals x * sigmoid(x),
// at every point to 1e-6 (relative above 1). Such trees are analytic in x, so agreeing with the
// target at 12 points to that precision means being the same function; a changed constant (0.5
// for 0.6, 0.044715 for 0.0447) or a different nonlinearity fails the check and stays primitive.
#pragma once

#include "core/ir/graph_impl.hpp"

namespace rungs::passes {

// Returns true when the graph changed.
bool fuse_activation(ir::GraphImpl& g);

}  // namespace rungs::passes
