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
#include <memory>
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

// Builds the HirModule of `g` with its symbolic dims bound (onnx_frontend.cpp, with the Builder of
// onnx_builder.hpp: its op table is onnx_builder.cpp, its op families onnx_ops_*.cpp): constant nodes
// fold, the rest maps onto Graph ops. `where` names the model (and extent) in errors; `roles`, when
// given, receives what each input feeds. The TF.js frontend builds its translated graphs with it.
HirModule build_module(const OnnxGraph& g, const std::string& where, const std::map<std::string, int64_t>& symbols,
                       std::vector<model::Frontend::Role>* roles);

// A Frontend over an OnnxGraph: the ONNX frontend's, and the TF.js frontend's, which translates
// model.json into the same graph (core/import/tfjs). Inputs, outputs and roles come from `g`; a
// build binds the bucket dim to the extent and every other symbol to `fixed`. The two differ in
// their format's name, where a param comes from, and (TF.js) what the graph is at an extent.
class GraphFrontend : public model::Frontend {
 public:
  OnnxGraph g;
  std::string source, name_, bucket_, description_;
  std::map<std::string, int64_t> fixed;  // every symbol but the bucket dim
  std::vector<Role> roles;

  const std::string& name() const override { return name_; }
  const std::string& bucket_dim() const override { return bucket_; }
  const std::string& description() const override { return description_; }
  std::vector<ModelInput> inputs(int64_t extent) const override;
  std::vector<std::string> output_names() const override;
  std::vector<ElementType> output_types() const override;
  std::vector<Role> input_roles() const override { return roles; }
  HirModule build(int64_t extent) const override { return build_roles(extent, nullptr); }
  // The module at `extent`; `r`, when given, receives what each input feeds (load time).
  HirModule build_roles(int64_t extent, std::vector<Role>* r) const;

 protected:
  // The graph to build at `extent`: `g` itself, or (TF.js) a copy in `scratch` with values that
  // depend on the extent bound.
  virtual const OnnxGraph& graph_at(int64_t extent, OnnxGraph& scratch) const;
};

// What a load hands back: the frontend, with its weights' values moved out of its graph into
// LoadedFrontend::weights (the Model holds them once) and how each was stored.
model::LoadedFrontend loaded(std::shared_ptr<GraphFrontend> f);

// A float initializer of more than one value is a weight: a Graph param named by the
// initializer, never folded; anything else (ints, bools, float scalars) is a constant.
OnnxGraph read_graph(std::span<const uint8_t> bytes, const LoadOptions& options, const std::string& source,
                     const std::string& base_dir);

}  // namespace rungs::onnx_import
