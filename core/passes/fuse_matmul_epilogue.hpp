// SPDX-License-Identifier: Apache-2.0
// core/passes/fuse_matmul_epilogue.hpp: fold bias, activation and residual add into the matmul
// that feeds them.
//
// Why: a linear layer lowers to matmul -> add(bias) -> activation -> add(residual), four kernels
// that each stream the whole [M, N] result through memory. One FusedMatMul applies the epilogue
// while the tile is still in registers: out = act(a @ b + bias) + residual.
//
// Matched after a MatMul, each step optional but in this order, each absorbed value read by
// nothing else:
//   add(y, bias) or add(bias, y)  bias of shape [N] or [1, ..., 1, N], not widening y's shape
//   relu | gelu | gelu_tanh | silu | tanh | sigmoid
//   add(y, r) or add(r, y)        r of exactly y's shape (a full-shape "bias" is a residual)
//
// A MatMul whose B is transpose(w, {1, 0}) of a rank-2 param w (ONNX Gemm with transB = 1, as
// PyTorch exports a Linear on 2-D input) becomes a FusedMatMul reading w itself with
// Epilogue::b_transposed, epilogue or not: the weight is packed once, read transposed, instead of
// transposed by a kernel on every call.
#pragma once

#include "core/ir/graph_impl.hpp"

namespace rungs::passes {

// Returns true when the graph changed.
bool fuse_matmul_epilogue(ir::GraphImpl& g);

}  // namespace rungs::passes
