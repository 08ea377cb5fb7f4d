// SPDX-License-Identifier: Apache-2.0
// core/ir/graph_json.cpp: Graph <-> JSON.
//
// The format (version 1) lists nodes in order; a node's inputs are indices of earlier nodes:
//   {"format": "rungs.graph", "version": 1,
//    "nodes": [{"op": "input", "name": "x", "shape": [2, 3]},
//              {"op": "constant", "shape": [1], "data": [0.5]},
//              {"op": "mul", "in": [0, 1]},
//              {"op": "attention", "in": [q, k, v], "heads": 2, "causal": false, "key_mask": m, "scale": 0.5}],
//    "outputs": [{"name": "y", "node": 2}]}
// Op fields: softmax/concat "axis"; sum/mean/max "axes", "keep_dims"; layer_norm/rms_norm "eps";
// reshape "shape"; transpose "perm"; slice "axis", "start", "length"; input/param "name", "shape".
// Non-finite constant values are written as the strings "inf", "-inf", "nan".
//
// from_json rebuilds the graph through the public builder, so every check the builder makes
// (shapes, broadcasting, axes, names) applies to files exactly as to code; its errors come back as
// Error(ParseError) prefixed with the node's path, e.g. "nodes[3] (matmul): inner dimensions ...".
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "core/check.hpp"
#include "core/ir/graph_impl.hpp"
#include "rungs/graph.hpp"

namespace rungs {

using ir::Node;
using ir::Op;
using json = nlohmann::json;

namespace {

constexpr const char* kFormat = "rungs.graph";
constexpr int kVersion = 1;

json float_to_json(float x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return x;
}

json node_to_json(const ir::GraphImpl& g, uint32_t id) {
  const Node& n = g.nodes[id];
  json j;
  j["op"] = std::string(ir::op_name(n.op));
  auto in = [&](size_t count) {
    j["in"] = std::vector<uint32_t>(n.in.begin(), n.in.begin() + static_cast<std::ptrdiff_t>(count));
  };
  switch (n.op) {
    case Op::Input:
    case Op::Param:
      j["name"] = n.name;
      j["shape"] = n.shape;
      break;
    case Op::Constant: {
      j["shape"] = n.shape;
      json data = json::array();
      for (float x : *n.data) data.push_back(float_to_json(x));
      j["data"] = std::move(data);
      break;
    }
    case Op::Softmax:
    case Op::Concat:
      in(n.in.size());
      j["axis"] = n.ints.at(0);
      break;
    case Op::LayerNorm:
    case Op::RmsNorm:
      in(n.in.size());
      j["eps"] = n.eps;
      break;
    case Op::ReduceSum:
    case Op::ReduceMean:
    case Op::ReduceMax:
      in(1);
      j["axes"] = n.ints;
      j["keep_dims"] = n.keep_dims;
      break;
    case Op::Reshape:
      in(1);
      j["shape"] = n.shape;
      break;
    case Op::Transpose:
      in(1);
      j["perm"] = n.ints;
      break;
    case Op::Slice:
      in(1);
      j["axis"] = n.ints.at(0);
      j["start"] = n.ints.at(1);
      j["length"] = n.ints.at(2);
      break;
    case Op::Attention:
      in(3);
      j["heads"] = n.heads;
      j["causal"] = n.causal;
      if (n.has_mask) j["key_mask"] = n.in.at(3);
      if (n.scale) j["scale"] = *n.scale;
      break;
    case Op::FusedMatMul:
    case Op::FusedElementwise:
    case Op::FusedAddNorm:
      fail(ErrorCode::Unsupported, "to_json: node " + ir::node_to_text(g, id) +
                                       " is a fused op made by the compiler; only builder graphs can be saved");
    default:  // matmul, gather, elementwise
      in(n.in.size());
      break;
  }
  return j;
}

// Reads one node object, checking each field's type, and calls the builder.
class NodeReader {
 public:
  NodeReader(const json& j, std::string path, const std::vector<Value>& built)
      : j_(j), path_(std::move(path)), built_(built) {}

  [[noreturn]] void bad(const std::string& field, const std::string& what) const {
    fail(ErrorCode::ParseError, "graph JSON: " + path_ + (field.empty() ? "" : "." + field) + ": " + what);
  }

  // Only `fields` (plus "op") may appear.
  void allow(std::initializer_list<const char*> fields, const std::string& op) const {
    for (auto it = j_.begin(); it != j_.end(); ++it) {
      if (it.key() == "op") continue;
      bool ok = false;
      for (const char* f : fields) ok = ok || it.key() == f;
      if (!ok) bad(it.key(), "unknown field for op '" + op + "'");
    }
  }

  const json& field(const char* key) const {
    auto it = j_.find(key);
    if (it == j_.end()) bad(key, "missing");
    return *it;
  }
  bool has(const char* key) const { return j_.contains(key); }

  static std::optional<int64_t> as_int(const json& v) {
    if (!v.is_number_integer()) return std::nullopt;
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return std::nullopt;
    return v.get<int64_t>();
  }
  int64_t integer(const char* key) const {
    auto v = as_int(field(key));
    if (!v) bad(key, "expected an integer, got " + field(key).dump());
    return *v;
  }
  int small_int(const char* key) const {
    int64_t v = integer(key);
    if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) bad(key, "out of range");
    return static_cast<int>(v);
  }
  std::vector<int64_t> integers(const char* key) const {
    const json& a = field(key);
    if (!a.is_array()) bad(key, "expected an array of integers, got " + a.dump());
    std::vector<int64_t> out;
    for (size_t i = 0; i < a.size(); ++i) {
      auto v = as_int(a[i]);
      if (!v) bad(std::string(key) + "[" + std::to_string(i) + "]", "expected an integer, got " + a[i].dump());
      out.push_back(*v);
    }
    return out;
  }
  std::vector<int> small_ints(const char* key) const {
    std::vector<int> out;
    for (int64_t v : integers(key)) {
      if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) bad(key, "value out of range");
      out.push_back(static_cast<int>(v));
    }
    return out;
  }
  // A JSON number as f32; one past the f32 range is refused (converting it would be undefined).
  static std::optional<float> as_float(const json& v) {
    if (!v.is_number()) return std::nullopt;
    const double d = v.get<double>();
    if (!(std::fabs(d) <= static_cast<double>(std::numeric_limits<float>::max()))) return std::nullopt;
    return static_cast<float>(d);
  }
  float number(const char* key) const {
    const json& v = field(key);
    auto f = as_float(v);
    if (!f) bad(key, "expected a number within the f32 range, got " + v.dump());
    return *f;
  }
  bool boolean(const char* key) const {
    const json& v = field(key);
    if (!v.is_boolean()) bad(key, "expected true or false, got " + v.dump());
    return v.get<bool>();
  }
  std::string string(const char* key) const {
    const json& v = field(key);
    if (!v.is_string()) bad(key, "expected a string, got " + v.dump());
    return v.get<std::string>();
  }
  Value ref(const json& v, const std::string& where) const {
    auto id = as_int(v);
    if (!id) bad(where, "expected a node index, got " + v.dump());
    if (*id < 0 || *id >= static_cast<int64_t>(built_.size()))
      bad(where, "refers to node " + std::to_string(*id) + ", which does not come before this node (nodes may only "
                 "read earlier nodes)");
    return built_[static_cast<size_t>(*id)];
  }
  // "in" with exactly `count` entries (count < 0: at least one).
  std::vector<Value> inputs(const std::string& op, int count) const {
    const json& a = field("in");
    if (!a.is_array()) bad("in", "expected an array of node indices, got " + a.dump());
    if (count >= 0 ? a.size() != static_cast<size_t>(count) : a.empty())
      bad("in", op + " takes " + (count >= 0 ? std::to_string(count) : std::string("at least 1")) +
                    " input(s), got " + std::to_string(a.size()));
    std::vector<Value> out;
    for (size_t i = 0; i < a.size(); ++i) out.push_back(ref(a[i], "in[" + std::to_string(i) + "]"));
    return out;
  }
  std::vector<float> data() const {
    const json& a = field("data");
    if (!a.is_array()) bad("data", "expected an array of numbers");
    std::vector<float> out;
    out.reserve(a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      const json& v = a[i];
      if (auto f = as_float(v)) {
        out.push_back(*f);
      } else if (v.is_number()) {
        bad("data[" + std::to_string(i) + "]", "expected a number within the f32 range (or \"inf\", \"-inf\"), got " +
                                                   v.dump());
      } else if (v == "inf") {
        out.push_back(std::numeric_limits<float>::infinity());
      } else if (v == "-inf") {
        out.push_back(-std::numeric_limits<float>::infinity());
      } else if (v == "nan") {
        out.push_back(std::numeric_limits<float>::quiet_NaN());
      } else {
        bad("data[" + std::to_string(i) + "]", "expected a number or \"inf\", \"-inf\", \"nan\", got " + v.dump());
      }
    }
    return out;
  }

 private:
  const json& j_;
  std::string path_;
  const std::vector<Value>& built_;
};

std::optional<Op> op_by_name(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(Op::FusedAddNorm); ++i)
    if (ir::op_name(static_cast<Op>(i)) == name) return static_cast<Op>(i);
  return std::nullopt;
}

Value unary_op(Graph& g, Op op, Value x) {
  switch (op) {
    case Op::Relu: return g.relu(x);
    case Op::Gelu: return g.gelu(x);
    case Op::GeluTanh: return g.gelu_tanh(x);
    case Op::Silu: return g.silu(x);
    case Op::Sigmoid: return g.sigmoid(x);
    case Op::Tanh: return g.tanh(x);
    case Op::Exp: return g.exp(x);
    case Op::Log: return g.log(x);
    case Op::Sqrt: return g.sqrt(x);
    case Op::Rsqrt: return g.rsqrt(x);
    case Op::Neg: return g.neg(x);
    case Op::Abs: return g.abs(x);
    case Op::Erf: return g.erf(x);
    case Op::Sin: return g.sin(x);
    case Op::Cos: return g.cos(x);
    case Op::LogicalNot: return g.logical_not(x);
    default: internal_check(false, "graph JSON: not a unary op");
  }
  return x;
}

Value binary_op(Graph& g, Op op, Value a, Value b) {
  switch (op) {
    case Op::Add: return g.add(a, b);
    case Op::Sub: return g.sub(a, b);
    case Op::Mul: return g.mul(a, b);
    case Op::Div: return g.div(a, b);
    case Op::Maximum: return g.maximum(a, b);
    case Op::Minimum: return g.minimum(a, b);
    case Op::Pow: return g.pow(a, b);
    case Op::Equal: return g.equal(a, b);
    case Op::Less: return g.less(a, b);
    case Op::Greater: return g.greater(a, b);
    case Op::LessEqual: return g.less_equal(a, b);
    case Op::GreaterEqual: return g.greater_equal(a, b);
    default: internal_check(false, "graph JSON: not a binary op");
  }
  return a;
}

Value build_node(Graph& g, const NodeReader& r, Op op) {
  const std::string name(ir::op_name(op));
  if (ir::is_unary(op)) {
    r.allow({"in"}, name);
    return unary_op(g, op, r.inputs(name, 1)[0]);
  }
  if (ir::is_binary(op)) {
    r.allow({"in"}, name);
    auto in = r.inputs(name, 2);
    return binary_op(g, op, in[0], in[1]);
  }
  if (op == Op::Where) {
    r.allow({"in"}, name);
    auto in = r.inputs(name, 3);
    return g.where(in[0], in[1], in[2]);
  }
  switch (op) {
    case Op::Input:
      r.allow({"name", "shape"}, name);
      return g.input(r.string("name"), r.integers("shape"));
    case Op::Param:
      r.allow({"name", "shape"}, name);
      return g.param(r.string("name"), r.integers("shape"));
    case Op::Constant:
      r.allow({"shape", "data"}, name);
      return g.constant(r.data(), r.integers("shape"));
    case Op::MatMul: {
      r.allow({"in"}, name);
      auto in = r.inputs(name, 2);
      return g.matmul(in[0], in[1]);
    }
    case Op::Softmax:
      r.allow({"in", "axis"}, name);
      return g.softmax(r.inputs(name, 1)[0], r.small_int("axis"));
    case Op::LayerNorm: {
      r.allow({"in", "eps"}, name);
      auto in = r.inputs(name, 3);
      return g.layer_norm(in[0], in[1], in[2], r.number("eps"));
    }
    case Op::RmsNorm: {
      r.allow({"in", "eps"}, name);
      auto in = r.inputs(name, 2);
      return g.rms_norm(in[0], in[1], r.number("eps"));
    }
    case Op::ReduceSum:
    case Op::ReduceMean:
    case Op::ReduceMax: {
      r.allow({"in", "axes", "keep_dims"}, name);
      Value x = r.inputs(name, 1)[0];
      auto axes = r.small_ints("axes");
      bool keep = r.has("keep_dims") && r.boolean("keep_dims");
      return op == Op::ReduceSum ? g.sum(x, axes, keep) : op == Op::ReduceMean ? g.mean(x, axes, keep) : g.max(x, axes, keep);
    }
    case Op::Reshape:
      r.allow({"in", "shape"}, name);
      return g.reshape(r.inputs(name, 1)[0], r.integers("shape"));
    case Op::Transpose:
      r.allow({"in", "perm"}, name);
      return g.transpose(r.inputs(name, 1)[0], r.small_ints("perm"));
    case Op::Slice:
      r.allow({"in", "axis", "start", "length"}, name);
      return g.slice(r.inputs(name, 1)[0], r.small_int("axis"), r.integer("start"), r.integer("length"));
    case Op::Concat:
      r.allow({"in", "axis"}, name);
      return g.concat(r.inputs(name, -1), r.small_int("axis"));
    case Op::Gather: {
      r.allow({"in"}, name);
      auto in = r.inputs(name, 2);
      return g.gather(in[0], in[1]);
    }
    case Op::Attention: {
      r.allow({"in", "heads", "causal", "key_mask", "scale"}, name);
      auto in = r.inputs(name, 3);
      AttentionOptions opt;
      if (r.has("heads")) opt.heads = r.small_int("heads");
      if (r.has("causal")) opt.causal = r.boolean("causal");
      if (r.has("key_mask")) opt.key_mask = r.ref(r.field("key_mask"), "key_mask");
      if (r.has("scale")) opt.scale = r.number("scale");
      return g.attention(in[0], in[1], in[2], opt);
    }
    default:
      r.bad("op", "'" + name + "' is a fused op made by the compiler's passes; a graph file holds builder ops only");
  }
}

}  // namespace

std::string Graph::to_json() const {
  const ir::GraphImpl& g = *impl_;
  json nodes = json::array();
  for (uint32_t i = 0; i < g.nodes.size(); ++i) nodes.push_back(node_to_json(g, i));
  json outputs = json::array();
  for (const auto& [name, id] : g.outputs) outputs.push_back({{"name", name}, {"node", id}});
  json j = {{"format", kFormat}, {"version", kVersion}, {"nodes", std::move(nodes)}, {"outputs", std::move(outputs)}};
  return j.dump();
}

Graph Graph::from_json(std::string_view text) {
  auto bad = [](const std::string& where, const std::string& what) {
    fail(ErrorCode::ParseError, "graph JSON: " + where + ": " + what);
  };
  json j;
  try {
    j = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number like 1e999
    fail(ErrorCode::ParseError, std::string("graph JSON: not valid JSON: ") + e.what());
  }
  if (!j.is_object()) bad("top level", "expected an object with \"nodes\" and \"outputs\"");
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "format" && it.key() != "version" && it.key() != "nodes" && it.key() != "outputs")
      bad(it.key(), "unknown field");
  if (j.contains("format") && j["format"] != kFormat)
    bad("format", std::string("expected \"") + kFormat + "\", got " + j["format"].dump());
  if (j.contains("version") && j["version"] != kVersion)
    bad("version", "expected " + std::to_string(kVersion) + ", got " + j["version"].dump());
  if (!j.contains("nodes") || !j["nodes"].is_array()) bad("nodes", "expected an array of nodes");
  if (!j.contains("outputs") || !j["outputs"].is_array()) bad("outputs", "expected an array of outputs");

  Graph g;
  std::vector<Value> built;
  const json& nodes = j["nodes"];
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::string path = "nodes[" + std::to_string(i) + "]";
    const json& jn = nodes[i];
    if (!jn.is_object()) bad(path, "expected an object, got " + jn.dump());
    NodeReader r(jn, path, built);
    std::string name = r.string("op");
    auto op = op_by_name(name);
    if (!op) bad(path + ".op", "unknown op '" + name + "'");
    try {
      built.push_back(build_node(g, r, *op));
    } catch (const Error& e) {
      if (e.code() == ErrorCode::ParseError) throw;
      fail(ErrorCode::ParseError, "graph JSON: " + path + " (" + name + "): " + e.what());
    }
  }
  const json& outputs = j["outputs"];
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string path = "outputs[" + std::to_string(i) + "]";
    const json& jo = outputs[i];
    if (!jo.is_object() || !jo.contains("name") || !jo["name"].is_string() || !jo.contains("node"))
      bad(path, "expected {\"name\": string, \"node\": index}, got " + jo.dump());
    for (auto it = jo.begin(); it != jo.end(); ++it)
      if (it.key() != "name" && it.key() != "node") bad(path + "." + it.key(), "unknown field");
    const json& node = jo["node"];
    if (!node.is_number_integer() || node.get<int64_t>() < 0 || node.get<int64_t>() >= static_cast<int64_t>(built.size()))
      bad(path + ".node", "expected the index of a node (0 to " + std::to_string(built.size()) + " - 1), got " + node.dump());
    try {
      g.output(jo["name"].get<std::string>(), built[node.get<size_t>()]);
    } catch (const Error& e) {
      if (e.code() == ErrorCode::ParseError) throw;
      fail(ErrorCode::ParseError, "graph JSON: " + path + ": " + e.what());
    }
  }
  return g;
}

}  // namespace rungs
