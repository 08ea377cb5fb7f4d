// SPDX-License-Identifier: Apache-2.0
// core/ir/graph_impl.hpp: the one IR every stage shares.
//
// A graph is a vector of nodes in topological order (a node's inputs always come before it) and
// a list of named outputs. The public Graph builder only creates primitive ops; the passes in
// core/passes/ rewrite graphs into fused ops (FusedMatMul, FusedElementwise, FusedAddNorm) of the
// same Node type, so one printer, one verifier and one planner serve every stage.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/ops.hpp"
#include "rungs/types.hpp"

namespace rungs::ir {

// The op vocabulary (Op, its classes and names, Instr, Epilogue, kMaxRank) is shared with the
// backends and lives below both (core/ops.hpp); the IR names it as its own.
using ops::elementwise_operands;
using ops::Epilogue;
using ops::Instr;
using ops::is_binary;
using ops::is_elementwise;
using ops::is_ternary;
using ops::is_unary;
using ops::kMaxRank;
using ops::Op;
using ops::op_info;
using ops::op_name;
using ops::OpClass;
using ops::OpInfo;

struct Node {
  Op op = Op::Input;
  std::vector<uint32_t> in;
  Shape shape;
  std::string name;           // Input / Param name
  std::vector<int64_t> ints;  // Reduce*: axes; Transpose: perm; Slice: {axis, start, length};
                              // Concat: {axis}; Softmax: {axis}; Attention: {} or {packed_qk}
                              // (backend::AttentionParams: q, k, v one tensor, its first
                              // packed_qk columns q, the next k, the rest v)
  float eps = 0.f;            // LayerNorm / RmsNorm / FusedAddNorm
  bool keep_dims = false;     // Reduce*
  // Attention
  int heads = 1;
  bool causal = false;
  bool has_mask = false;  // in[3] is the [B, Sk] keep mask
  std::optional<float> scale;
  // Constant
  std::shared_ptr<const std::vector<float>> data;
  // FusedMatMul
  Epilogue epi;
  // FusedElementwise
  std::vector<Instr> prog;
  int16_t regs = 0;  // registers the program uses (inputs included)
  // FusedAddNorm: LayerNorm or RmsNorm
  Op norm = Op::LayerNorm;
};

struct GraphImpl {
  std::vector<Node> nodes;
  std::vector<std::pair<std::string, uint32_t>> outputs;

  uint32_t add(Node n) {
    nodes.push_back(std::move(n));
    return static_cast<uint32_t>(nodes.size() - 1);
  }
  const Node& at(uint32_t id) const { return nodes[id]; }
};

// "name: op(inputs) -> shape" one node a line, then the outputs.
std::string to_text(const GraphImpl& g);
std::string node_to_text(const GraphImpl& g, uint32_t id);

// How many consumers (node inputs and graph outputs) each node has.
std::vector<uint32_t> use_counts(const GraphImpl& g);

// Broadcast two shapes numpy-style; std::nullopt when incompatible.
std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b);

}  // namespace rungs::ir
