// SPDX-License-Identifier: Apache-2.0
// core/ops.hpp: the op vocabulary the IR and the backends share.
//
// The IR (core/ir/graph_impl.hpp) builds nodes of these ops; a backend (backends/kernel.hpp) is
// told which op a kernel computes, and a fused elementwise node's program, in the same words,
// without seeing the IR. Both sit above this header, which depends on the public types only.
#pragma once

#include <cstdint>
#include <string_view>

#include "rungs/types.hpp"

namespace rungs::ops {

constexpr int kMaxRank = 8;  // deeper tensors are refused by the builder (Error(Unsupported))

enum class Op : uint8_t {
  // leaves
  Input,
  Param,
  Constant,
  // matrix product, [..., M, K] x [..., K, N]
  MatMul,
  // binary elementwise, numpy broadcasting
  Add,
  Sub,
  Mul,
  Div,
  Maximum,
  Minimum,
  Pow,
  // comparisons (binary, numpy broadcasting): 1.0f where true, 0.0f where false
  Equal,
  Less,
  Greater,
  LessEqual,
  GreaterEqual,
  // unary elementwise
  Relu,
  Gelu,
  GeluTanh,
  Silu,
  Sigmoid,
  Tanh,
  Exp,
  Log,
  Sqrt,
  Rsqrt,
  Neg,
  Abs,
  Erf,
  Sin,
  Cos,
  LogicalNot,  // x == 0 ? 1 : 0
  // ternary elementwise: in[0] != 0 ? in[1] : in[2], numpy broadcasting of all three
  Where,
  // row ops
  Softmax,
  LayerNorm,
  RmsNorm,
  // reductions (ints = sorted axes)
  ReduceSum,
  ReduceMean,
  ReduceMax,
  // data movement
  Reshape,
  Transpose,
  Slice,
  Concat,
  Gather,
  // attention, q k v [mask]
  Attention,
  // fused ops, made by passes only
  FusedMatMul,       // in: a, b, [bias], [residual]; epilogue: out = act(a@b + bias) + residual
  FusedElementwise,  // in: any broadcastable tensors; prog evaluates one output element
  FusedAddNorm,      // in: a, b, gamma, [beta]; out = norm(a + b) (norm = LayerNorm or RmsNorm)
};

enum class OpClass : uint8_t {
  Leaf,
  Unary,
  Binary,
  Ternary,
  Other,
  Fused
};

struct OpInfo {
  std::string_view name;
  OpClass cls;
};

const OpInfo& op_info(Op op);
inline std::string_view op_name(Op op) { return op_info(op).name; }
inline bool is_unary(Op op) { return op_info(op).cls == OpClass::Unary; }
inline bool is_binary(Op op) { return op_info(op).cls == OpClass::Binary; }
inline bool is_ternary(Op op) { return op_info(op).cls == OpClass::Ternary; }
inline bool is_elementwise(Op op) { return is_unary(op) || is_binary(op) || is_ternary(op); }
// Operands an elementwise op reads: 1, 2 or 3 (0 for any other op).
inline int elementwise_operands(Op op) { return is_unary(op) ? 1 : is_binary(op) ? 2
                                                               : is_ternary(op)  ? 3
                                                                                 : 0; }

// One step of a FusedElementwise program. Registers 0 .. inputs-1 hold the node's inputs
// (broadcast to the output shape); later registers hold temporaries. A binary op with b < 0
// uses `imm` as its right operand (a folded scalar constant); with a < 0 it uses `imm` as its
// left operand. Where reads a third operand c (the value where the condition a is 0); an operand
// < 0 of Where is `imm` likewise (at most one per instruction). The last instruction's dst is
// the result.
struct Instr {
  Op op;
  int16_t dst;
  int16_t a;
  int16_t b;
  float imm = 0.f;
  int16_t c = -1;
};

struct Epilogue {
  bool bias = false;  // in[2] is a bias broadcast over the last axis ([N])
  Activation act = Activation::None;
  bool residual = false;  // the last input is added after the activation (same shape as out)
  // Not an epilogue but how B is read: in[1] is a rank-2 Param holding B transposed ([N, K]),
  // read in that layout when the weight is packed, so no transpose kernel runs per call.
  bool b_transposed = false;
  // Not an epilogue either: B is this many rank-2 weights side by side (in[1 .. b_parts]), the
  // output their products with A concatenated along the last axis, and with bias the next
  // b_parts inputs their biases (core/passes/fuse_qkv.cpp makes such products).
  int b_parts = 1;
};

}  // namespace rungs::ops
