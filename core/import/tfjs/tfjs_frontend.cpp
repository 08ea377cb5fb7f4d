// SPDX-License-Identifier: Apache-2.0
// core/import/tfjs/tfjs_frontend.cpp: the TF.js graph-model frontend (docs/tfjs.md).
//
// Same machinery, another op table: model.json's GraphDef is translated node by node into the
// ONNX frontend's neutral graph (core/import/onnx/onnx_graph.hpp: ONNX op names, constants,
// weights), which build_module folds and lowers per extent exactly as it does an ONNX file. The
// weights come from the shards the weightsManifest names (every Const node's value is there).
//
// A sparse batch (Placeholders `indices` [N, 2] and `values` [N], as Universal Sentence Encoder
// Lite takes) is bound to one sentence: `indices` is (0, i) for i < N at each extent, a constant,
// so the sparse structure folds away; `values` (the token ids) and `mask` (ones for the tokens,
// zeros for padding) are the runtime inputs and N their bucket dim, "tokens". The model's own
// mask, `SparseToDense(..., default) > default`, becomes the mask input, and the positions
// Where(mask) picks become every row, so a padded run gives the unpadded embedding.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "core/check.hpp"
#include "core/import/onnx/onnx_graph.hpp"
#include "core/import/tfjs/tfjs_weights.hpp"
#include "core/model/frontend.hpp"
#include "core/model/json_util.hpp"

namespace rungs::tfjs_import {

namespace {

using json = nlohmann::json;
using onnx_import::Attr;
using onnx_import::Dim;
using onnx_import::Kind;
using onnx_import::Node;
using onnx_import::OnnxGraph;
using onnx_import::Port;
using onnx_import::Tensor;

constexpr char kBucket[] = "tokens";
constexpr int64_t kBig = int64_t{1} << 40;  // "to the end" in a Slice (clamped by the builder)
constexpr char kMaskInput[] = "mask";       // the sparse batch's padding mask (docs/tfjs.md)

// The TF ops the translator maps (the list docs/tfjs.md shows and unsupported-op errors print).
const std::vector<std::string>& supported_ops() {
  static const std::vector<std::string> ops = {
      "Abs", "Add", "AddV2", "BatchMatMul", "BatchMatMulV2", "BiasAdd", "Cast", "ConcatV2", "Const", "Conv2D",
      "Cos", "Div", "Equal", "Erf", "Exp", "ExpandDims", "Fill", "Gather", "GatherNd", "GatherV2", "Greater",
      "GreaterEqual", "Identity", "Less", "LessEqual", "Log", "LogicalAnd", "LogicalNot", "LogicalOr", "MatMul",
      "Max", "Maximum", "Mean", "Minimum", "Mul", "Neg", "Pack", "Placeholder", "Pow", "Prod", "Range", "RealDiv",
      "Reciprocal", "Relu", "Reshape", "Rsqrt", "ScatterNd", "Select", "SelectV2", "Shape", "Sigmoid", "Sin",
      "Size", "Slice", "Softmax", "SparseToDense", "Split", "SplitV", "Sqrt", "Square", "Squeeze", "StopGradient",
      "StridedSlice", "Sub", "Sum", "Tanh", "Transpose", "Where"};
  return ops;
}

std::string join(const std::vector<std::string>& xs) {
  std::string s;
  for (size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + xs[i];
  return s;
}

// TF DataType (a number or its DT_ name) -> ONNX TensorProto.DataType.
int onnx_type(const json& t) {
  static const std::map<std::string, int> names = {{"DT_FLOAT", 1}, {"DT_INT32", 3}, {"DT_INT64", 9}, {"DT_BOOL", 10}, {"DT_DOUBLE", 2}, {"DT_UINT8", 4}};
  int tf = 0;
  if (t.is_string()) {
    auto it = names.find(t.get<std::string>());
    tf = it == names.end() ? -1 : it->second;
  } else if (t.is_number_integer()) {
    tf = t.get<int>();
  }
  switch (tf) {
    case 1: return onnx_import::kFloat;
    case 2: return onnx_import::kDouble;
    case 3: return onnx_import::kInt32;
    case 4: return onnx_import::kUint8;
    case 9: return onnx_import::kInt64;
    case 10: return onnx_import::kBool;
    default: return 0;
  }
}

int64_t to_int(const json& v) {
  if (v.is_string()) return std::stoll(v.get<std::string>());
  if (v.is_number()) return v.get<int64_t>();
  if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
  return 0;
}

// A TF `bytes` attribute: base64 text (protobuf's JSON mapping: the standard or the URL-safe
// alphabet, padding optional) or an array of byte values; nullopt when it is neither (a character
// outside both alphabets, padding before the end, a lone trailing character, a value past 255).
std::optional<std::string> bytes_of(const json& v) {
  std::string out;
  if (v.is_array()) {
    for (const json& b : v) {
      if (!b.is_number_integer() || b.get<int64_t>() < 0 || b.get<int64_t>() > 255) return std::nullopt;
      out += static_cast<char>(b.get<int>());
    }
    return out;
  }
  if (!v.is_string()) return std::nullopt;
  const std::string& text = v.get_ref<const std::string&>();
  // The text before its padding (empty for "" and for padding alone); padding, when present, is at
  // most two characters and brings the length to a multiple of 4.
  const size_t end = text.find_last_not_of('=') + 1;
  if (text.size() - end > 2 || (text.size() > end && text.size() % 4 != 0)) return std::nullopt;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < end; ++i) {
    const char c = text[i];
    int k = -1;
    if (c >= 'A' && c <= 'Z') k = c - 'A';
    else if (c >= 'a' && c <= 'z') k = c - 'a' + 26;
    else if (c >= '0' && c <= '9') k = c - '0' + 52;
    else if (c == '+' || c == '-') k = 62;
    else if (c == '/' || c == '_') k = 63;
    if (k < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(k);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  if (end % 4 == 1) return std::nullopt;  // 6 bits: not a byte
  return out;
}

struct TfNode {
  std::string name, op;
  std::vector<std::string> inputs;  // data inputs, "x" or "x:k" (control inputs dropped)
  json attr;
};

// `base`, or base_2, base_3, ... when a node already has that name.
std::string unique_name(const std::string& base, const std::map<std::string, const TfNode*>& taken) {
  std::string name = base;
  for (int i = 2; taken.count(name); ++i) name = base + "_" + std::to_string(i);
  return name;
}

class Translator {
 public:
  explicit Translator(const std::string& source) : source_(source) {}

  OnnxGraph g;
  // The sparse batch's padding mask (docs/tfjs.md, "Padding"): the runtime input standing for
  // `dense > default` over a SparseToDense, empty when the model has no sparse batch.
  std::string mask_input;
  std::map<std::string, const TfNode*> by_name;  // every node, for the structure the mask is recognised by

  [[noreturn]] void fail_at(const TfNode& n, ErrorCode code, const std::string& what) const {
    fail(code, source_ + ": node '" + n.name + "' (" + n.op + "): " + what);
  }

  void translate(const TfNode& n) {
    node_ = &n;
    const std::string& op = n.op;
    static const std::map<std::string, std::string> same = {
        {"Add", "Add"}, {"AddV2", "Add"}, {"Sub", "Sub"}, {"Mul", "Mul"}, {"RealDiv", "Div"}, {"Div", "Div"}, {"Maximum", "Max"}, {"Minimum", "Min"}, {"Pow", "Pow"}, {"Rsqrt", "Rsqrt"}, {"Sqrt", "Sqrt"}, {"Tanh", "Tanh"}, {"Relu", "Relu"}, {"Sigmoid", "Sigmoid"}, {"Exp", "Exp"}, {"Log", "Log"}, {"Neg", "Neg"}, {"Abs", "Abs"}, {"Sin", "Sin"}, {"Cos", "Cos"}, {"Erf", "Erf"}, {"Reciprocal", "Reciprocal"}, {"Less", "Less"}, {"Greater", "Greater"}, {"LessEqual", "LessOrEqual"}, {"GreaterEqual", "GreaterOrEqual"}, {"Equal", "Equal"}, {"LogicalNot", "Not"}, {"LogicalAnd", "And"}, {"LogicalOr", "Or"}, {"Identity", "Identity"}, {"StopGradient", "Identity"}, {"Shape", "Shape"}, {"Size", "Size"}, {"Reshape", "Reshape"}, {"Range", "Range"}, {"Select", "Where"}, {"SelectV2", "Where"}, {"GatherNd", "GatherND"}, {"ExpandDims", "Unsqueeze"}};
    if (op == "Greater" && sparse_mask(n)) return mask_value(n);
    if (op == "Where" && n.inputs.size() == 1 && masks_.count(in(0))) return mask_rows(n);
    if (op == "Cast" && masks_.count(in(0))) masks_.insert(n.name);  // still the mask, as ints or floats
    if (op == "Sum" && masks_.count(in(0)) && !to_int(attr(n, "keep_dims").value("b", json(false))) &&
        (ints_of(1) == std::vector<int64_t>{1} || ints_of(1) == std::vector<int64_t>{-1})) {
      lengths_.insert(n.name);  // the mask's length: Sum over its positions
    }
    if (op == "ExpandDims" && lengths_.count(in(0)) && g.constants.count(in(1)) && (scalar_of(1) == 1 || scalar_of(1) == -1)) {
      column_lengths_.insert(n.name);  // [1] -> [1, 1]
    }
    if (op == "Less" && column_lengths_.count(in(1)) && sequence_mask_of(n)) return;
    if (auto it = same.find(op); it != same.end()) return emit(it->second, in_all(), {n.name});
    if (op == "BiasAdd") {
      check_nhwc(n);
      return emit("Add", in_all(), {n.name});
    }
    if (op == "Square") return emit("Mul", {in(0), in(0)}, {n.name});
    if (op == "Where") {
      if (n.inputs.size() == 3) return emit("Where", in_all(), {n.name});
      const std::string nz = fresh();
      emit("NonZero", {in(0)}, {nz});
      return emit("Transpose", {nz}, {n.name}, {{"perm", ints_attr({1, 0})}});
    }
    if (op == "Cast") {
      const int to = onnx_type(attr(n, "DstT").value("type", json()));
      if (to == 0) fail_at(n, ErrorCode::Unsupported, "Cast to this type is not supported");
      return emit("Cast", {in(0)}, {n.name}, {{"to", int_attr(to)}});
    }
    if (op == "Squeeze") {
      std::vector<int64_t> dims = list_ints(n, "squeeze_dims");
      if (dims.empty()) return emit("Squeeze", {in(0)}, {n.name});
      return emit("Squeeze", {in(0), const_ints(dims)}, {n.name});
    }
    if (op == "StridedSlice") return strided_slice(n);
    if (op == "Slice") {
      const std::vector<int64_t> begin = ints_of(1), size = ints_of(2);
      std::vector<int64_t> end, axes;
      for (size_t i = 0; i < begin.size(); ++i) {
        end.push_back(size.at(i) < 0 ? kBig : begin[i] + size.at(i));
        axes.push_back(static_cast<int64_t>(i));
      }
      return emit("Slice", {in(0), const_ints(begin), const_ints(end), const_ints(axes)}, {n.name});
    }
    if (op == "ConcatV2") {
      std::vector<std::string> xs = in_all();
      const int64_t axis = scalar_of(xs.size() - 1);
      xs.pop_back();
      return emit("Concat", xs, {n.name}, {{"axis", int_attr(axis)}});
    }
    if (op == "Pack") {
      const int64_t axis = to_int(attr(n, "axis").value("i", json(0)));
      std::vector<std::string> parts;
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        parts.push_back(fresh());
        emit("Unsqueeze", {in(i), const_ints({axis})}, {parts.back()});
      }
      return emit("Concat", parts, {n.name}, {{"axis", int_attr(axis)}});
    }
    if (op == "GatherV2" || op == "Gather") {
      if (to_int(attr(n, "batch_dims").value("i", json(0))) != 0) fail_at(n, ErrorCode::Unsupported, "batch_dims is not supported");
      const int64_t axis = op == "GatherV2" ? scalar_of(2) : 0;
      return emit("Gather", {in(0), in(1)}, {n.name}, {{"axis", int_attr(axis)}});
    }
    if (op == "ScatterNd") {  // (indices, updates, shape): into zeros
      const std::string zeros = fresh();
      emit("Expand", {zero_scalar(n), in(2)}, {zeros});
      return emit("ScatterND", {zeros, in(0), in(1)}, {n.name});
    }
    if (op == "SparseToDense") {  // (indices, shape, values, default)
      const std::string dense = fresh();
      emit("Expand", {in(3), in(1)}, {dense});
      return emit("ScatterND", {dense, in(0), in(2)}, {n.name});
    }
    if (op == "Fill") return emit("Expand", {in(1), in(0)}, {n.name});
    if (op == "Mean" || op == "Sum" || op == "Max" || op == "Prod") {
      const std::vector<int64_t> axes = ints_of(1);
      const int64_t keep = to_int(attr(n, "keep_dims").value("b", json(false)));
      const std::string onnx_op = op == "Mean" ? "ReduceMean" : op == "Sum" ? "ReduceSum"
                                                            : op == "Max"   ? "ReduceMax"
                                                                            : "ReduceProd";
      std::map<std::string, Attr> a = {{"keepdims", int_attr(keep)}};
      if (axes.empty()) a["noop_with_empty_axes"] = int_attr(1);
      if (onnx_op == "ReduceSum") return emit(onnx_op, {in(0), const_ints(axes)}, {n.name}, a);
      a["axes"] = ints_attr(axes);
      return emit(onnx_op, {in(0)}, {n.name}, a);
    }
    if (op == "MatMul") {
      std::string a = in(0), b = in(1);
      if (to_int(attr(n, "transpose_a").value("b", json(false)))) a = transposed(a);
      if (to_int(attr(n, "transpose_b").value("b", json(false)))) b = transposed(b);
      return emit("MatMul", {a, b}, {n.name});
    }
    if (op == "BatchMatMul" || op == "BatchMatMulV2") {
      Node& m = add("BatchMatMul", {in(0), in(1)}, {n.name},
                    {{"adj_x", int_attr(to_int(attr(n, "adj_x").value("b", json(false))))},
                     {"adj_y", int_attr(to_int(attr(n, "adj_y").value("b", json(false))))}});
      m.domain = onnx_import::kTfDomain;
      return;
    }
    if (op == "Conv2D") return conv2d(n);
    if (op == "Transpose") return emit("Transpose", {in(0)}, {n.name}, {{"perm", ints_attr(ints_of(1))}});
    if (op == "Softmax") return emit("Softmax", {in(0)}, {n.name}, {{"axis", int_attr(-1)}});
    if (op == "SplitV" || op == "Split") {
      // SplitV(x, size_splits, axis); Split(axis, x) in num_split equal parts.
      const bool v = op == "SplitV";
      const int64_t parts = to_int(attr(n, "num_split").value("i", json(1)));
      std::vector<std::string> outs{n.name};
      for (int64_t i = 1; i < parts; ++i) outs.push_back(n.name + ":" + std::to_string(i));
      if (!v) return emit("Split", {in(1)}, outs, {{"axis", int_attr(scalar_of(0))}});
      const std::vector<int64_t> sizes = ints_of(1);
      if (std::find(sizes.begin(), sizes.end(), -1) != sizes.end()) fail_at(n, ErrorCode::Unsupported, "a size of -1 in size_splits is not supported");
      return emit("Split", {in(0), in(1)}, outs, {{"axis", int_attr(scalar_of(2))}});
    }
    fail_at(n, ErrorCode::Unsupported, "op " + op + " is not supported; the supported TF ops are: " + join(supported_ops()));
  }

 private:
  const std::string& source_;
  const TfNode* node_ = nullptr;
  int tmp_ = 0;
  std::set<std::string> masks_;                     // the values mask_value made and their casts
  std::set<std::string> mask_values_;               // the values mask_value made
  std::set<std::string> rows_;                      // the values mask_rows made
  std::set<std::string> lengths_, column_lengths_;  // Sum of a mask over its positions; as [1, 1]
  std::set<std::string> conv_kernels_;              // Conv2D kernel weights declared [C, F] (conv2d)
  static constexpr char kPositions[] = "rungs/positions";
  static constexpr int64_t kPositionRows = 8192;

  // `Greater(SparseToDense(indices, shape, values, d), d)`: which positions of the dense batch a
  // sparse value fills (the default d is what no value takes). Only with a mask input to stand in.
  bool sparse_mask(const TfNode& n) const {
    if (mask_input.empty() || n.inputs.size() != 2) return false;
    auto s = by_name.find(ref(n.inputs[0]));
    if (s == by_name.end() || s->second->op != "SparseToDense" || s->second->inputs.size() != 4) return false;
    auto d = g.constants.find(ref(s->second->inputs[3]));
    auto c = g.constants.find(ref(n.inputs[1]));
    return d != g.constants.end() && c != g.constants.end() && d->second.v.size() == 1 && c->second.v.size() == 1 &&
           d->second.v[0] == c->second.v[0];
  }

  // The mask as the runtime input gives it: [N] -> [1, N], cut to the dense shape (the model's
  // clip). The caller gives ones for its tokens; the bucketed cache pads zeros. Used as it is (no
  // comparison), so it stays zero in padded rows, which active extent needs of a masked sum.
  void mask_value(const TfNode& n) {
    const TfNode& dense = *by_name.at(ref(n.inputs[0]));
    const std::string row = fresh();
    emit("Reshape", {mask_input, const_ints({1, -1})}, {row});
    emit("Slice", {row, const_ints({0, 0}), ref(dense.inputs[1]), const_ints({0, 1})}, {n.name});
    masks_.insert(n.name);
    mask_values_.insert(n.name);
  }

  // Where(mask): the positions of the mask's ones. A mask is ones then zeros (the padding follows
  // the tokens), so the positions are every row of the dense batch: padded rows are computed, and
  // the model's own masking (the attention bias, the pooling's sequence mask) keeps them out.
  void mask_rows(const TfNode& n) {
    const std::string shape = fresh(), ones = fresh(), one = fresh(), nz = fresh();
    g.constants[one] = Tensor{Kind::Bool, {}, {1.0}};
    emit("Shape", {in(0)}, {shape});
    emit("Expand", {one, shape}, {ones});
    emit("NonZero", {ones}, {nz});
    emit("Transpose", {nz}, {n.name}, {{"perm", ints_attr({1, 0})}});
    rows_.insert(n.name);
  }

  // Less(Range(0, K, 1), length of mask M as [1, 1]): the sequence mask of M's length, [1, K].
  // M is ones then zeros, so that is M itself (cut to K): written so, it stays zero in padded
  // rows, which active extent needs of the masked sum that pools with it.
  bool sequence_mask_of(const TfNode& n) {
    auto r = by_name.find(ref(n.inputs[0]));
    if (r == by_name.end() || r->second->op != "Range" || r->second->inputs.size() != 3) return false;
    auto start = g.constants.find(ref(r->second->inputs[0])), delta = g.constants.find(ref(r->second->inputs[2]));
    if (start == g.constants.end() || delta == g.constants.end() || start->second.v != std::vector<double>{0} ||
        delta->second.v != std::vector<double>{1}) {
      return false;
    }
    // The mask the length was summed from: ExpandDims <- Sum <- (Cast <-)* mask.
    std::string m = ref(by_name.at(ref(by_name.at(in(1))->inputs[0]))->inputs[0]);
    while (!mask_values_.count(m)) m = ref(by_name.at(m)->inputs.at(0));
    const std::string limit = fresh();
    emit("Reshape", {ref(r->second->inputs[1]), const_ints({1})}, {limit});
    emit("Slice", {m, const_ints({0}), limit, const_ints({-1})}, {n.name});
    return true;
  }

  // StridedSlice of mask rows [L, 2] (sentence, position) that keeps every row and takes the
  // position column: 0..L-1, written as the first L values of a table of positions (a weight,
  // so it is not folded) and not as a constant, so that it carries rows for active extent
  // (docs/active-extent.md: a prefix slice of a table). The positions are floats (a model casts
  // them to float for its timing signal); past kPositions rows the build fails naming the node.
  bool mask_positions(const TfNode& n, const std::vector<int64_t>& begin, const std::vector<int64_t>& strides,
                      int64_t begin_mask, int64_t end_mask, int64_t shrink) {
    if (!rows_.count(in(0)) || begin.size() != 2 || strides != std::vector<int64_t>{1, 1}) return false;
    if (!(begin_mask & 1) || !(end_mask & 1) || shrink != 2 || begin[1] != 1) return false;
    if (!g.weights.count(kPositions)) {
      g.weights[kPositions] = {kPositionRows};
      std::vector<float> v(static_cast<size_t>(kPositionRows));
      std::iota(v.begin(), v.end(), 0.f);
      g.weight_values[kPositions] = std::move(v);
      g.stored[kPositions] = TensorDType::F32;
    }
    const std::string shape = fresh(), count = fresh();
    emit("Shape", {in(0)}, {shape});
    emit("Slice", {shape, const_ints({0}), const_ints({1})}, {count});
    emit("Slice", {kPositions, const_ints({0}), count, const_ints({0})}, {n.name});
    return true;
  }

  static std::string ref(const std::string& input) {
    if (input.size() > 2 && input.compare(input.size() - 2, 2, ":0") == 0) return input.substr(0, input.size() - 2);
    return input;
  }
  std::string in(size_t i) const {
    if (i >= node_->inputs.size()) fail_at(*node_, ErrorCode::ParseError, "input " + std::to_string(i) + " is missing");
    return ref(node_->inputs[i]);
  }
  std::vector<std::string> in_all() const {
    std::vector<std::string> out;
    for (size_t i = 0; i < node_->inputs.size(); ++i) out.push_back(in(i));
    return out;
  }
  std::string fresh() { return node_->name + "/rungs:" + std::to_string(tmp_++); }

  static const json& attr(const TfNode& n, const char* name) {
    static const json empty = json::object();
    if (!n.attr.is_object()) return empty;
    auto it = n.attr.find(name);
    return it == n.attr.end() || !it->is_object() ? empty : *it;
  }
  std::vector<int64_t> list_ints(const TfNode& n, const char* name) const {
    std::vector<int64_t> out;
    const json& a = attr(n, name);
    if (auto l = a.find("list"); l != a.end() && l->is_object())
      if (auto i = l->find("i"); i != l->end() && i->is_array())
        for (const json& v : *i) out.push_back(to_int(v));
    return out;
  }
  static Attr int_attr(int64_t v) {
    Attr a;
    a.type = Attr::Int;
    a.i = v;
    return a;
  }
  static Attr ints_attr(std::vector<int64_t> v) {
    Attr a;
    a.type = Attr::Ints;
    a.ints = std::move(v);
    return a;
  }

  void emit(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs,
            std::map<std::string, Attr> attrs = {}) {
    add(op, std::move(inputs), std::move(outputs), std::move(attrs));
  }
  Node& add(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs,
            std::map<std::string, Attr> attrs) {
    Node m;
    m.op = op;
    m.name = node_->name;  // errors name the TF node
    m.inputs = std::move(inputs);
    m.outputs = std::move(outputs);
    m.attrs = std::move(attrs);
    g.nodes.push_back(std::move(m));
    return g.nodes.back();
  }

  // The value of constant input i (a Const node): begin/end/axes and other structure.
  const Tensor& const_of(size_t i) const {
    const std::string name = in(i);
    auto it = g.constants.find(name);
    if (it == g.constants.end()) {
      fail_at(*node_, ErrorCode::Unsupported, "input " + std::to_string(i) + " ('" + name + "') must be a Const node");
    }
    return it->second;
  }
  std::vector<int64_t> ints_of(size_t i) const {
    std::vector<int64_t> out;
    for (double d : const_of(i).v) out.push_back(int_at(i, d));
    return out;
  }
  int64_t int_at(size_t i, double d) const {
    const std::optional<int64_t> v = onnx_import::to_int64(d);
    if (!v) fail_at(*node_, ErrorCode::ParseError, "input " + std::to_string(i) + " holds NaN where an integer is needed");
    return *v;
  }
  int64_t scalar_of(size_t i) const {
    const Tensor& t = const_of(i);
    if (t.v.size() != 1) fail_at(*node_, ErrorCode::ParseError, "input " + std::to_string(i) + " must hold one value");
    return int_at(i, t.v[0]);
  }
  std::string const_ints(const std::vector<int64_t>& v) {
    const std::string name = fresh();
    g.constants[name] = Tensor{Kind::Int, {static_cast<int64_t>(v.size())}, std::vector<double>(v.begin(), v.end())};
    return name;
  }
  std::string zero_scalar(const TfNode& n) {
    const int t = onnx_type(attr(n, "T").value("type", json(1)));
    const std::string name = fresh();
    g.constants[name] = Tensor{t == onnx_import::kFloat || t == 0 ? Kind::Float : onnx_import::kind_of(t), {}, {0.0}};
    return name;
  }
  std::string transposed(const std::string& x) {
    const std::string t = fresh();
    emit("Transpose", {x}, {t}, {{"perm", ints_attr({1, 0})}});
    return t;
  }

  void check_nhwc(const TfNode& n) const {
    const json text = attr(n, "data_format").value("s", json(""));
    const std::optional<std::string> format = bytes_of(text);
    if (!format) fail_at(n, ErrorCode::ParseError, "data_format " + text.dump() + " is neither base64 text nor a list of bytes");
    const std::string& f = *format;
    if (!f.empty() && f != "NHWC") fail_at(n, ErrorCode::Unsupported, "data_format " + f + " is not supported (NHWC only)");
  }

  // StridedSlice with begin/end masks and shrink_axis_mask: a Slice, then a Squeeze of the shrunk axes.
  void strided_slice(const TfNode& n) {
    const int64_t begin_mask = to_int(attr(n, "begin_mask").value("i", json(0)));
    const int64_t end_mask = to_int(attr(n, "end_mask").value("i", json(0)));
    const int64_t shrink = to_int(attr(n, "shrink_axis_mask").value("i", json(0)));
    if (to_int(attr(n, "ellipsis_mask").value("i", json(0))) || to_int(attr(n, "new_axis_mask").value("i", json(0)))) {
      fail_at(n, ErrorCode::Unsupported, "ellipsis_mask and new_axis_mask are not supported");
    }
    const std::vector<int64_t> begin = ints_of(1), end = ints_of(2), strides = ints_of(3);
    if (mask_positions(n, begin, strides, begin_mask, end_mask, shrink)) return;
    std::vector<int64_t> starts, ends, axes, steps, squeeze;
    for (size_t i = 0; i < begin.size(); ++i) {
      const int64_t stride = strides.at(i);
      if (stride == 0) fail_at(n, ErrorCode::InvalidArgument, "a stride is 0");
      int64_t b = begin[i], e = end.at(i);
      if (begin_mask >> i & 1) b = stride > 0 ? 0 : kBig;
      if (end_mask >> i & 1) e = stride > 0 ? kBig : -kBig;
      int64_t s = stride;
      if (shrink >> i & 1) {
        e = b == -1 ? kBig : b + 1;
        s = 1;
        squeeze.push_back(static_cast<int64_t>(i));
      }
      starts.push_back(b);
      ends.push_back(e);
      axes.push_back(static_cast<int64_t>(i));
      steps.push_back(s);
    }
    const std::string out = squeeze.empty() ? n.name : fresh();
    emit("Slice", {in(0), const_ints(starts), const_ints(ends), const_ints(axes), const_ints(steps)}, {out});
    if (!squeeze.empty()) emit("Squeeze", {out, const_ints(squeeze)}, {n.name});
  }

  // Whether every node that reads `name` is a Conv2D reading it as its kernel.
  bool only_conv_kernel(const std::string& name) const {
    for (const auto& [_, node] : by_name)
      for (size_t i = 0; i < node->inputs.size(); ++i)
        if (ref(node->inputs[i]) == name && (node->op != "Conv2D" || i != 1)) return false;
    return true;
  }

  // A 1x1 Conv2D of stride 1 (a pointwise projection): x [.., C] times the kernel as [C, F].
  void conv2d(const TfNode& n) {
    check_nhwc(n);
    for (const char* a : {"strides", "dilations"}) {
      for (int64_t v : list_ints(n, a))
        if (v != 1) fail_at(n, ErrorCode::Unsupported, std::string(a) + " other than 1 are not supported (1x1 kernels only)");
    }
    const std::string k = in(1);
    Shape ks;
    if (auto w = g.weights.find(k); w != g.weights.end()) ks = conv_kernels_.count(k) ? Shape{1, 1, w->second[0], w->second[1]} : w->second;
    else if (auto c = g.constants.find(k); c != g.constants.end()) ks = c->second.shape;
    else fail_at(n, ErrorCode::Unsupported, "the kernel must be a Const node");
    if (ks.size() != 4 || ks[0] != 1 || ks[1] != 1) {
      fail_at(n, ErrorCode::Unsupported, "kernel " + shape_to_string(ks) + ": only 1x1 kernels are supported");
    }
    // As rows: x [.., C] -> [rows, C], times the kernel, back to [.., F]. A MatMul of x as it is
    // ([1, L, 1, C] in USE Lite's attention) is a batch of L products of one row each, and one of
    // a reshaped weight is a product by a value, not by a param: both several times slower than
    // a product of L rows by the param. A kernel weight only Conv2D nodes read is therefore
    // declared [C, F] (the same bytes).
    std::string flat = fresh();
    const std::string rows = fresh(), y = fresh(), shape = fresh(), lead = fresh(), out_shape = fresh();
    if (g.weights.count(k) && (conv_kernels_.count(k) || only_conv_kernel(k))) {
      g.weights[k] = {ks[2], ks[3]};
      conv_kernels_.insert(k);
      flat = k;
    } else {
      emit("Reshape", {k, const_ints({ks[2], ks[3]})}, {flat});
    }
    emit("Reshape", {in(0), const_ints({-1, ks[2]})}, {rows});
    emit("MatMul", {rows, flat}, {y});
    emit("Shape", {in(0)}, {shape});
    emit("Slice", {shape, const_ints({0}), const_ints({-1})}, {lead});
    emit("Concat", {lead, const_ints({ks[3]})}, {out_shape}, {{"axis", int_attr(0)}});
    emit("Reshape", {y, out_shape}, {n.name});
  }
};

class TfjsFrontend final : public onnx_import::GraphFrontend {
 public:
  bool sparse = false;

  std::string_view format() const override { return "tfjs"; }
  std::string param_origin(const std::string& param) const override { return "Const node '" + param + "'"; }

 protected:
  const OnnxGraph& graph_at(int64_t extent, OnnxGraph& scratch) const override {
    if (!sparse) return g;
    scratch = g;  // one sentence: token i sits at (0, i)
    Tensor t{Kind::Int, {extent, 2}, {}};
    for (int64_t i = 0; i < extent; ++i) t.v.insert(t.v.end(), {0.0, static_cast<double>(i)});
    scratch.constants["indices"] = std::move(t);
    return scratch;
  }
};

// The nodes in an order where each comes after its inputs (Kahn's algorithm, stable).
std::vector<TfNode> sorted(std::vector<TfNode> nodes, const std::string& source) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!index.emplace(nodes[i].name, i).second) fail(ErrorCode::ParseError, source + ": two nodes are named '" + nodes[i].name + "'");
  }
  std::vector<std::vector<size_t>> users(nodes.size());
  std::vector<size_t> waiting(nodes.size(), 0);
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const std::string& in : nodes[i].inputs) {
      const std::string base = in.substr(0, in.find(':'));
      auto it = index.find(base);
      if (it == index.end()) fail(ErrorCode::ParseError, source + ": node '" + nodes[i].name + "' (" + nodes[i].op + "): input '" + in + "' is not a node");
      users[it->second].push_back(i);
      ++waiting[i];
    }
  }
  std::vector<size_t> ready;
  for (size_t i = nodes.size(); i-- > 0;)
    if (waiting[i] == 0) ready.push_back(i);
  std::vector<TfNode> out;
  while (!ready.empty()) {
    const size_t i = ready.back();
    ready.pop_back();
    out.push_back(nodes[i]);
    for (size_t u : users[i])
      if (--waiting[u] == 0) ready.push_back(u);
  }
  if (out.size() != nodes.size()) fail(ErrorCode::ParseError, source + ": the graph has a cycle");
  return out;
}

}  // namespace

}  // namespace rungs::tfjs_import

namespace rungs::model {

LoadedFrontend load_tfjs(std::string_view json_text, const ShardReader& read_shard, const LoadOptions& options,
                         const std::string& source) {
  using namespace tfjs_import;
  if (!options.fix.empty() || !options.external_data.empty() || (!options.bucket_dim.empty() && options.bucket_dim != kBucket)) {
    fail(ErrorCode::InvalidArgument, source + ": a TF.js graph model takes no load options but bucket_dim \"tokens\" (docs/tfjs.md)");
  }
  const json j = model_json::parse_strict(json_text, source, "TF.js model");
  if (!j.is_object() || !j.contains("modelTopology") || !j.contains("weightsManifest")) {
    fail(ErrorCode::ParseError, source + ": not a TF.js graph model (no modelTopology and weightsManifest)");
  }
  const json& topo = j["modelTopology"];
  if (!topo.is_object() || !topo.contains("node") || !topo["node"].is_array()) {
    fail(ErrorCode::ParseError, source + ": modelTopology.node must be an array (a TF.js graph model; layers models are not supported)");
  }
  auto f = std::make_shared<TfjsFrontend>();
  f->bucket_ = kBucket;
  f->source = source;
  std::filesystem::path p(source);
  f->name_ = p.stem().string() == "model" && !p.parent_path().filename().empty() ? p.parent_path().filename().string() : p.stem().string();
  std::map<std::string, std::vector<float>> floats;
  std::map<std::string, Tensor> values = read_weights(j["weightsManifest"], read_shard, source, &floats);

  std::vector<TfNode> nodes;
  for (const json& n : topo["node"]) {
    TfNode t;
    t.name = n.value("name", "");
    t.op = n.value("op", "");
    if (t.name.empty() || t.op.empty()) fail(ErrorCode::ParseError, source + ": a node without a name or op");
    for (const json& in : n.value("input", json::array())) {
      const std::string s = in.get<std::string>();
      if (!s.empty() && s[0] != '^') t.inputs.push_back(s);
    }
    t.attr = n.value("attr", json::object());
    nodes.push_back(std::move(t));
  }
  nodes = sorted(std::move(nodes), source);

  Translator tr(source);
  OnnxGraph& g = tr.g;
  g.opset = 17;
  g.graph_name = f->name_;
  std::set<std::string> placeholders, consumed;
  for (const TfNode& n : nodes)
    for (const std::string& in : n.inputs) consumed.insert(in.substr(0, in.find(':')));
  for (const TfNode& n : nodes) {
    if (n.op == "Placeholder") placeholders.insert(n.name);
  }
  f->sparse = placeholders == std::set<std::string>{"indices", "values"};
  for (const TfNode& n : nodes) tr.by_name[n.name] = &n;
  // Whether the sparse batch's mask idiom is there: Greater(SparseToDense(.., d), d) (Translator::sparse_mask).
  bool has_mask = false;
  auto base = [](const std::string& in) { return in.ends_with(":0") ? in.substr(0, in.size() - 2) : in; };
  for (const TfNode& n : nodes) {
    if (n.op != "Greater" || n.inputs.size() != 2) continue;
    auto s = tr.by_name.find(base(n.inputs[0]));
    if (s == tr.by_name.end() || s->second->op != "SparseToDense" || s->second->inputs.size() != 4) continue;
    auto d = values.find(base(s->second->inputs[3]));
    auto c = values.find(base(n.inputs[1]));
    has_mask = has_mask || (d != values.end() && c != values.end() && d->second.v.size() == 1 && c->second.v == d->second.v);
  }
  for (const TfNode& n : nodes) {
    if (n.op == "Const") {
      auto it = values.find(n.name);
      if (it == values.end()) tr.fail_at(n, ErrorCode::ParseError, "its value is not in the weightsManifest");
      if (auto w = floats.find(n.name); w != floats.end()) {
        g.weights[n.name] = it->second.shape;
        g.weight_values[n.name] = std::move(w->second);
        g.stored[n.name] = TensorDType::F32;
      } else {
        g.constants[n.name] = it->second;
      }
      continue;
    }
    if (n.op == "Placeholder") {
      const json& a = n.attr;
      const int type = onnx_type(a.value("dtype", json::object()).value("type", json()));
      if (type == 0) tr.fail_at(n, ErrorCode::Unsupported, "the input's dtype is not supported");
      std::vector<Dim> dims;
      const json shape = a.value("shape", json::object()).value("shape", json::object());
      int unknown = 0;
      for (const json& d : shape.value("dim", json::array())) {
        const int64_t size = to_int(d.value("size", json("0")));
        dims.push_back(size >= 0 ? Dim{size, ""} : Dim{-1, kBucket});
        unknown += size < 0;
      }
      if (unknown > 1 || shape.value("unknownRank", false)) {
        tr.fail_at(n, ErrorCode::Unsupported, "an input with more than one unknown dim is not supported (one is the bucket dim, \"tokens\")");
      }
      if (f->sparse && n.name == "indices") {
        if (dims.size() != 2 || dims[1].value != 2) tr.fail_at(n, ErrorCode::Unsupported, "the sparse batch's indices must be [N, 2]");
        continue;  // bound per extent
      }
      g.inputs.push_back(Port{n.name, type == onnx_import::kInt32 ? onnx_import::kInt64 : type, dims, true});
      if (f->sparse) g.input_min[n.name] = 0;  // token ids are never negative
      if (f->sparse && has_mask) {
        // The padding mask, ones for the tokens: what `dense > default` becomes (Translator::mask_value).
        tr.mask_input = unique_name(kMaskInput, tr.by_name);
        g.inputs.push_back(Port{tr.mask_input, onnx_import::kInt64, dims, true});
      }
      continue;
    }
    tr.translate(n);
  }
  // Outputs: the signature's, else every node no other node reads.
  std::vector<std::string> outs;
  if (j.contains("signature") && j["signature"].is_object() && j["signature"].contains("outputs")) {
    for (const auto& [key, o] : j["signature"]["outputs"].items()) {
      std::string name = o.value("name", key);
      if (name.size() > 2 && name.compare(name.size() - 2, 2, ":0") == 0) name.resize(name.size() - 2);
      outs.push_back(name);
    }
  } else {
    for (const TfNode& n : nodes)
      if (n.op != "Const" && n.op != "Placeholder" && !consumed.count(n.name)) outs.push_back(n.name);
  }
  if (outs.empty()) fail(ErrorCode::ParseError, source + ": the graph has no output");
  for (const std::string& o : outs) g.outputs.push_back(Port{o, onnx_import::kFloat, {}, false});
  f->description_ = "TF.js graph model, " + std::to_string(nodes.size()) + " nodes" +
                    (f->sparse ? " (a sparse batch bound to one sentence of N tokens)" : "");
  f->g = std::move(g);
  f->roles.assign(f->g.inputs.size(), {});
  f->build_roles(2, &f->roles);
  for (size_t i = 0; i < f->g.inputs.size(); ++i)
    if (!tr.mask_input.empty() && f->g.inputs[i].name == tr.mask_input) f->roles[i].role = InputRole::Mask;
  return onnx_import::loaded(std::move(f));
}

}  // namespace rungs::model
