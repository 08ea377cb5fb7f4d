// SPDX-License-Identifier: Apache-2.0
// core/import/onnx/onnx_graph.hpp: a ModelProto read into the frontend's own plain form.
//
// read_graph parses the bytes with the protobuf classes (onnx_proto.hpp, the only place that sees
// them), checks the opset, decodes every initializer and Constant attribute (raw_data and typed
// fields, external data) and sorts the nodes topologically (a cycle or an undefined input is an
// error naming the node). Everything after it works on these structs only.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/import/onnx/onnx_tensor.hpp"
#include "core/model/frontend.hpp"
#include "rungs/model.hpp"

namespace rungs::onnx_import {

constexpr int64_t kMinOpset = 11, kMaxOpset = 17;
constexpr size_t kMaxNodes = 1u << 20;

struct Attr {
  enum Type { Float = 1, Int = 2, String = 3, TensorT = 4, Floats = 6, Ints = 7, Strings = 8 };
  int type = 0;
  double f = 0;
  int64_t i = 0;
  std::string s;
  std::vector<double> floats;
  std::vector<int64_t> ints;
  std::optional<Tensor> t;
};

struct Node {
  std::string op, domain, name;  // name: the node's name, or "#<index>" when it has none
  std::vector<std::string> inputs, outputs;  // "" for an omitted optional input
  std::map<std::string, Attr> attrs;
};

struct Dim {
  int64_t value = -1;  // >= 0: static
  std::string symbol;  // dim_param
};

struct Port {
  std::string name;
  int elem_type = 0;
  std::vector<Dim> dims;
  bool has_shape = false;
};

struct OnnxGraph {
  std::string graph_name, doc, producer;
  int64_t opset = 0;
  std::vector<Port> inputs, outputs;  // inputs: the real ones (initializers removed)
  std::vector<Node> nodes;            // topological order
  std::map<std::string, Tensor> constants;  // initializers kept as constants (see is_weight)
  std::map<std::string, Shape> weights;     // float initializers of more than one value
  ParamMap weight_values;                   // their values, f32
  std::map<std::string, TensorDType> stored;
  // Input -> a bound every value of it keeps (never set from an ONNX file: the TF.js frontend says
  // token ids are >= 0); a comparison the bound decides folds to a constant.
  std::map<std::string, double> input_min;
};

// The domain of the few TensorFlow ops the TF.js frontend hands the builder as they are
// (core/import/tfjs): BatchMatMul with adj_x / adj_y.
inline const std::string kTfDomain = "org.tensorflow";

// Builds the HirModule of `g` with its symbolic dims bound (onnx_frontend.cpp): constant nodes
// fold, the rest maps onto Graph ops. `where` names the model (and extent) in errors; `roles`, when
// given, receives what each input feeds. The TF.js frontend builds its translated graphs with it.
HirModule build_module(const OnnxGraph& g, const std::string& where, const std::map<std::string, int64_t>& symbols,
                       std::vector<model::Frontend::Role>* roles);

// A float initializer of more than one value is a weight: a Graph param named by the
// initializer, never folded; anything else (ints, bools, float scalars) is a constant.
OnnxGraph read_graph(std::span<const uint8_t> bytes, const LoadOptions& options, const std::string& source,
                     const std::string& base_dir);

}  // namespace rungs::onnx_import
