// SPDX-License-Identifier: Apache-2.0
// rungs/graph.hpp: the primitive-op graph builder (static shapes, f32 values).
//
// Shape inference happens as you build: a call with incompatible shapes throws
// Error(ShapeMismatch) naming the op and both shapes, and leaves the graph unchanged.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rungs/types.hpp"

namespace rungs {

namespace ir {
struct GraphImpl;
struct GraphAccess;
}

class Graph {
 public:
  Graph();
  ~Graph();
  Graph(const Graph& other);
  Graph& operator=(const Graph& other);
  Graph(Graph&&) noexcept;
  Graph& operator=(Graph&&) noexcept;

  Value input(std::string name, Shape shape);
  Value param(std::string name, Shape shape);  // weights, set later with CompiledGraph::set_param
  Value constant(std::vector<float> data, Shape shape);

  Value matmul(Value a, Value b);  // [..., M, K] x [..., K, N], batch dims broadcast
  Value add(Value a, Value b);     // numpy broadcasting for all binary ops
  Value sub(Value a, Value b);
  Value mul(Value a, Value b);
  Value div(Value a, Value b);
  Value maximum(Value a, Value b);
  Value minimum(Value a, Value b);
  Value pow(Value x, Value y);  // std::pow's meaning per element (pow(x, 0) is 1, even for NaN x)
  // Comparisons give 1.0f where true and 0.0f where false (false when an operand is NaN).
  Value equal(Value a, Value b);
  Value less(Value a, Value b);
  Value greater(Value a, Value b);
  Value less_equal(Value a, Value b);
  Value greater_equal(Value a, Value b);
  Value where(Value cond, Value a, Value b);  // cond != 0 ? a : b (NaN counts as != 0), broadcasting all three

  Value relu(Value x);
  Value gelu(Value x);       // exact (erf) GELU
  Value gelu_tanh(Value x);  // tanh approximation
  Value silu(Value x);
  Value sigmoid(Value x);
  Value tanh(Value x);
  Value exp(Value x);
  Value log(Value x);
  Value sqrt(Value x);
  Value rsqrt(Value x);
  Value neg(Value x);
  Value abs(Value x);
  Value erf(Value x);
  Value sin(Value x);
  Value cos(Value x);
  Value logical_not(Value x);  // x == 0 ? 1 : 0 (so 0 for NaN)

  Value softmax(Value x, int axis = -1);
  Value layer_norm(Value x, Value gamma, Value beta, float eps = 1e-5f);  // over the last axis
  Value rms_norm(Value x, Value gamma, float eps = 1e-6f);                // over the last axis
  Value sum(Value x, std::vector<int> axes, bool keep_dims = false);
  Value mean(Value x, std::vector<int> axes, bool keep_dims = false);
  Value max(Value x, std::vector<int> axes, bool keep_dims = false);

  Value reshape(Value x, Shape shape);  // one dim may be -1
  Value transpose(Value x, std::vector<int> perm);
  Value slice(Value x, int axis, int64_t start, int64_t length);
  Value concat(std::vector<Value> xs, int axis);
  Value gather(Value table, Value indices);  // rows of table [V, D] at float ids: indices.shape + [D]
  Value attention(Value q, Value k, Value v, AttentionOptions options);

  void output(std::string name, Value v);  // outputs keep the order of these calls

  Shape shape(Value v) const;
  size_t node_count() const;
  // The inputs and outputs declared so far, in order, with their shapes.
  std::vector<std::pair<std::string, Shape>> inputs() const;
  std::vector<std::pair<std::string, Shape>> outputs() const;
  std::string to_text() const;  // readable dump, one node a line

  // JSON (de)serialization of the whole graph, constants included. from_json throws
  // Error(ParseError) naming the field at fault.
  std::string to_json() const;
  static Graph from_json(std::string_view text);

 private:
  // The IR behind the builder, for the library's own layers (core/ir/graph_access.hpp).
  friend struct ir::GraphAccess;
  std::unique_ptr<ir::GraphImpl> impl_;
};

}  // namespace rungs
