// SPDX-License-Identifier: Apache-2.0
// core/import/onnx/onnx_graph.cpp: ModelProto -> OnnxGraph (the only file that sees protobuf).
#include "core/import/onnx/onnx_graph.hpp"

#include <cstring>
#include <fstream>
#include <set>

#include "core/check.hpp"
#include "core/import/onnx/onnx_proto.hpp"

namespace rungs::onnx_import {

namespace {

// Where a tensor's bytes are: its raw_data, or a slice of an external-data file.
class ExternalData {
 public:
  ExternalData(const LoadOptions& options, std::string source, std::string base_dir)
      : options_(options), source_(std::move(source)), base_dir_(std::move(base_dir)) {}

  const std::string& bytes(const std::string& location, const std::string& tensor) {
    if (auto it = files_.find(location); it != files_.end()) return it->second;
    for (const auto& [name, data] : options_.external_data) {
      if (name == location) return files_[location] = std::string(data.begin(), data.end());
    }
    if (base_dir_.empty()) {
      fail(ErrorCode::ParseError, source_ + ": initializer '" + tensor + "' keeps its values in the external file '" +
                                      location + "', which was not given: pass its bytes in "
                                      "LoadOptions::external_data under the name \"" + location + "\"");
    }
    if (location.empty() || location[0] == '/' || location.find("..") != std::string::npos) {
      fail(ErrorCode::ParseError, source_ + ": initializer '" + tensor + "': external data location '" + location +
                                      "' must be a relative path inside the model's folder");
    }
    const std::string path = base_dir_ + "/" + location;
#ifdef __EMSCRIPTEN__
    // The wasm build loads models from bytes only (base_dir_ is empty there): no file streams,
    // which would link libc++'s fstream and Emscripten's file system (~60 KB gzipped, docs/onnx.md).
    fail(ErrorCode::Unsupported, source_ + ": initializer '" + tensor + "': reading external data from " + path +
                                     " is not available in WebAssembly: pass its bytes in LoadOptions::external_data");
#else
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      fail(ErrorCode::ParseError, source_ + ": initializer '" + tensor + "' keeps its values in the external file '" +
                                      location + "', which cannot be read (looked for " + path + ")");
    }
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return files_[location] = std::move(data);
#endif
  }

 private:
  const LoadOptions& options_;
  std::string source_, base_dir_;
  std::map<std::string, std::string> files_;
};

size_t element_bytes(int type) {
  switch (type) {
    case kFloat: case kInt32: return 4;
    case kInt64: case kDouble: return 8;
    case kFloat16: case kBfloat16: return 2;
    default: return 1;
  }
}

double from_le(const char* p, int type) {
  switch (type) {
    case kFloat: { float f; std::memcpy(&f, p, 4); return f; }
    case kDouble: { double d; std::memcpy(&d, p, 8); return d; }
    case kInt32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case kInt64: { int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case kFloat16: { uint16_t h; std::memcpy(&h, p, 2); return half_to_float(h); }
    case kBfloat16: { uint16_t h; std::memcpy(&h, p, 2); return bf16_to_float(h); }
    case kInt8: return static_cast<int8_t>(*p);
    case kUint8: return static_cast<uint8_t>(*p);
    case kBool: return *p != 0 ? 1.0 : 0.0;
  }
  return 0;
}

// Decodes a TensorProto's values into `out` (doubles; exact for every supported type's values but
// int64 beyond 2^53, which no shape holds), checking the count against the shape.
void decode_values(const pb::TensorProto& t, const std::string& what, ExternalData& ext, const Shape& shape,
                   std::vector<double>& out) {
  const int type = t.data_type();
  const auto n = static_cast<size_t>(shape_numel(shape));
  out.clear();
  auto count_mismatch = [&](size_t got, const char* field) {
    fail(ErrorCode::ParseError, what + ": " + field + " holds " + std::to_string(got) + " values, the shape " +
                                    shape_to_string(shape) + " needs " + std::to_string(n));
  };
  const std::string* raw = nullptr;
  std::string ext_slice;
  if (t.data_location() == pb::TensorProto::EXTERNAL) {
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto& kv : t.external_data()) {
      try {
        if (kv.key() == "location") location = kv.value();
        if (kv.key() == "offset") offset = std::stoll(kv.value());
        if (kv.key() == "length") length = std::stoll(kv.value());
      } catch (const std::exception&) {
        fail(ErrorCode::ParseError, what + ": external_data '" + kv.key() + "' is not a number: '" + kv.value() + "'");
      }
    }
    const std::string& file = ext.bytes(location, t.name());
    const int64_t want = static_cast<int64_t>(n * element_bytes(type));
    if (length < 0) length = want;
    if (offset < 0 || length != want || offset > static_cast<int64_t>(file.size()) ||
        length > static_cast<int64_t>(file.size()) - offset) {
      fail(ErrorCode::ParseError, what + ": external data '" + location + "' offset " + std::to_string(offset) +
                                      " length " + std::to_string(length) + " does not hold the " +
                                      std::to_string(want) + " bytes of shape " + shape_to_string(shape) +
                                      " in a file of " + std::to_string(file.size()) + " bytes");
    }
    ext_slice = file.substr(static_cast<size_t>(offset), static_cast<size_t>(length));
    raw = &ext_slice;
  } else if (t.has_raw_data()) {
    raw = &t.raw_data();
  }
  if (raw) {
    const size_t eb = element_bytes(type);
    if (raw->size() != n * eb) count_mismatch(raw->size() / eb, "raw_data");
    out.resize(n);
    for (size_t i = 0; i < n; ++i) out[i] = from_le(raw->data() + i * eb, type);
    return;
  }
  switch (type) {
    case kFloat:
      if (static_cast<size_t>(t.float_data_size()) != n) count_mismatch(t.float_data_size(), "float_data");
      for (float f : t.float_data()) out.push_back(f);
      break;
    case kDouble:
      if (static_cast<size_t>(t.double_data_size()) != n) count_mismatch(t.double_data_size(), "double_data");
      for (double d : t.double_data()) out.push_back(d);
      break;
    case kInt64:
      if (static_cast<size_t>(t.int64_data_size()) != n) count_mismatch(t.int64_data_size(), "int64_data");
      for (int64_t v : t.int64_data()) out.push_back(static_cast<double>(v));
      break;
    default:  // int32_data holds INT32, INT8, UINT8, BOOL and the 16-bit floats' bits
      if (static_cast<size_t>(t.int32_data_size()) != n) count_mismatch(t.int32_data_size(), "int32_data");
      for (int32_t v : t.int32_data()) {
        if (type == kFloat16) out.push_back(half_to_float(static_cast<uint16_t>(v)));
        else if (type == kBfloat16) out.push_back(bf16_to_float(static_cast<uint16_t>(v)));
        else if (type == kBool) out.push_back(v != 0 ? 1.0 : 0.0);
        else out.push_back(v);
      }
      break;
  }
}

Shape tensor_shape(const pb::TensorProto& t, const std::string& what) {
  Shape s(t.dims().begin(), t.dims().end());
  check_shape(s, what);
  return s;
}

void check_type(int type, const std::string& what) {
  if (!supported_type(type)) {
    fail(ErrorCode::Unsupported, what + ": element type " + data_type_name(type) +
                                     " is not supported (FLOAT, FLOAT16, BFLOAT16, DOUBLE, INT64, INT32, INT8, "
                                     "UINT8, BOOL are)");
  }
}

Tensor decode_tensor(const pb::TensorProto& t, const std::string& what, ExternalData& ext) {
  check_type(t.data_type(), what);
  Tensor out;
  out.kind = kind_of(t.data_type());
  out.shape = tensor_shape(t, what);
  if (shape_numel(out.shape) > kMaxFoldElements && out.kind != Kind::Float) {
    fail(ErrorCode::ParseError, what + ": " + shape_to_string(out.shape) + " holds more than " +
                                    std::to_string(kMaxFoldElements) + " integer values, past the limit");
  }
  decode_values(t, what, ext, out.shape, out.v);
  return out;
}

Port read_port(const pb::ValueInfoProto& vi, const std::string& what) {
  Port p;
  p.name = vi.name();
  if (!vi.has_type() || !vi.type().has_tensor_type()) {
    fail(ErrorCode::Unsupported, what + " '" + p.name + "' is not a tensor (sequences, maps and optionals are not supported)");
  }
  const auto& tt = vi.type().tensor_type();
  p.elem_type = tt.elem_type();
  if (tt.has_shape()) {
    p.has_shape = true;
    if (static_cast<size_t>(tt.shape().dim_size()) > kMaxRank) {
      fail(ErrorCode::ParseError, what + " '" + p.name + "': rank " + std::to_string(tt.shape().dim_size()) +
                                      " is past the limit of " + std::to_string(kMaxRank));
    }
    for (const auto& d : tt.shape().dim()) {
      Dim dim;
      if (d.has_dim_value()) {
        dim.value = d.dim_value();
        if (dim.value < 0 || dim.value > kMaxDim) {
          fail(ErrorCode::ParseError, what + " '" + p.name + "': dim " + std::to_string(dim.value) +
                                          " is outside [0, " + std::to_string(kMaxDim) + "]");
        }
      } else {
        dim.symbol = d.dim_param();
      }
      p.dims.push_back(std::move(dim));
    }
  }
  return p;
}

std::string node_label(const Node& n) { return "node '" + n.name + "' (" + n.op + ")"; }

}  // namespace

OnnxGraph read_graph(std::span<const uint8_t> bytes, const LoadOptions& options, const std::string& source,
                     const std::string& base_dir) {
  if (bytes.size() > (size_t{2} << 30) - 1) {
    fail(ErrorCode::ParseError, source + ": " + std::to_string(bytes.size()) +
                                    " bytes is past protobuf's 2 GiB limit; keep the weights as external data");
  }
  pb::ModelProto model;
  if (bytes.empty() || !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    fail(ErrorCode::ParseError, source + ": not an ONNX file: the bytes are not a valid protobuf ModelProto" +
                                    std::string(bytes.empty() ? " (the file is empty)" : " (truncated or corrupt?)"));
  }
  if (model.ir_version() <= 0 || !model.has_graph() || model.graph().output_size() == 0) {
    fail(ErrorCode::ParseError, source + ": not an ONNX model: " +
                                    std::string(model.ir_version() <= 0 ? "no ir_version"
                                                : !model.has_graph()   ? "no graph"
                                                                       : "the graph has no outputs") +
                                    " (a valid protobuf, but not a ModelProto?)");
  }
  OnnxGraph g;
  g.producer = model.producer_name();
  g.doc = model.doc_string();
  bool default_domain = false;
  for (const auto& op : model.opset_import()) {
    if (op.domain().empty() || op.domain() == "ai.onnx") {
      default_domain = true;
      g.opset = op.version();
    }
  }
  if (!default_domain) g.opset = model.ir_version() <= 2 ? 1 : 0;
  if (g.opset < kMinOpset || g.opset > kMaxOpset) {
    fail(ErrorCode::Unsupported, source + ": opset " + std::to_string(g.opset) + " of the default domain is not supported: rungs reads opsets " +
                                     std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) +
                                     " (re-export with torch.onnx.export(..., opset_version=17))");
  }
  const pb::GraphProto& graph = model.graph();
  g.graph_name = graph.name();
  if (static_cast<size_t>(graph.node_size()) > kMaxNodes) {
    fail(ErrorCode::ParseError, source + ": " + std::to_string(graph.node_size()) + " nodes is past the limit of " +
                                    std::to_string(kMaxNodes));
  }
  ExternalData ext(options, source, base_dir);
  std::set<std::string> defined;
  for (const auto& init : graph.initializer()) {
    const std::string what = source + ": initializer '" + init.name() + "'";
    if (init.name().empty()) fail(ErrorCode::ParseError, source + ": an initializer has no name");
    if (!defined.insert(init.name()).second) fail(ErrorCode::ParseError, what + " is defined twice");
    check_type(init.data_type(), what);
    const Shape shape = tensor_shape(init, what);
    if (kind_of(init.data_type()) == Kind::Float && shape_numel(shape) > 1) {
      std::vector<double> v;
      decode_values(init, what, ext, shape, v);
      g.weights[init.name()] = shape;
      g.weight_values[init.name()] = std::vector<float>(v.begin(), v.end());
      g.stored[init.name()] = init.data_type() == kFloat16    ? TensorDType::F16
                              : init.data_type() == kBfloat16 ? TensorDType::BF16
                                                              : TensorDType::F32;
    } else {
      g.constants[init.name()] = decode_tensor(init, what, ext);
    }
  }
  std::set<std::string> seen_inputs;
  for (const auto& in : graph.input()) {
    if (defined.count(in.name())) continue;  // an initializer listed as an input: a weight
    if (in.name().empty()) fail(ErrorCode::ParseError, source + ": a graph input has no name");
    if (!seen_inputs.insert(in.name()).second) {
      fail(ErrorCode::ParseError, source + ": graph input '" + in.name() + "' is declared twice");
    }
    Port p = read_port(in, source + ": input");
    if (p.elem_type != kFloat && p.elem_type != kInt64 && p.elem_type != kInt32 && p.elem_type != kBool) {
      fail(ErrorCode::Unsupported, source + ": input '" + p.name + "' has element type " + data_type_name(p.elem_type) +
                                       "; inputs may be FLOAT, INT64, INT32 or BOOL");
    }
    if (!p.has_shape) {
      fail(ErrorCode::Unsupported, source + ": input '" + p.name + "' has no shape; rungs needs each input's rank "
                                           "and dims (static or named)");
    }
    g.inputs.push_back(std::move(p));
  }
  for (const auto& in : g.inputs) defined.insert(in.name);
  for (const auto& out : graph.output()) g.outputs.push_back(read_port(out, source + ": output"));

  // The nodes, then a topological order (Kahn): nodes whose inputs are all defined run first.
  std::vector<Node> nodes;
  nodes.reserve(static_cast<size_t>(graph.node_size()));
  for (int i = 0; i < graph.node_size(); ++i) {
    const pb::NodeProto& np = graph.node(i);
    Node n;
    n.op = np.op_type();
    n.domain = np.domain() == "ai.onnx" ? "" : np.domain();
    n.name = np.name().empty() ? "#" + std::to_string(i) : np.name();
    n.inputs.assign(np.input().begin(), np.input().end());
    n.outputs.assign(np.output().begin(), np.output().end());
    for (const auto& a : np.attribute()) {
      Attr at;
      at.type = a.type();
      at.f = a.f();
      at.i = a.i();
      at.s = a.s();
      for (float f : a.floats()) at.floats.push_back(f);
      at.ints.assign(a.ints().begin(), a.ints().end());
      if (a.has_t()) at.t = decode_tensor(a.t(), source + ": " + node_label(n) + " attribute '" + a.name() + "'", ext);
      if (a.type() == pb::AttributeProto::GRAPH || a.type() == pb::AttributeProto::GRAPHS) {
        fail(ErrorCode::Unsupported, source + ": " + node_label(n) + " has a subgraph attribute '" + a.name() +
                                         "'; control flow (If, Loop, Scan) is not supported");
      }
      n.attrs[a.name()] = std::move(at);
    }
    nodes.push_back(std::move(n));
  }
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const auto& o : nodes[i].outputs) {
      if (o.empty()) continue;
      if (defined.count(o) || !producer.emplace(o, i).second) {
        fail(ErrorCode::ParseError, source + ": " + node_label(nodes[i]) + " writes '" + o +
                                        "', which is already defined (each value is assigned once)");
      }
    }
  }
  std::vector<size_t> missing(nodes.size(), 0);
  std::vector<std::vector<size_t>> users(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const auto& in : nodes[i].inputs) {
      if (in.empty() || defined.count(in)) continue;
      auto it = producer.find(in);
      if (it == producer.end()) {
        fail(ErrorCode::ParseError, source + ": " + node_label(nodes[i]) + " reads '" + in +
                                        "', which no input, initializer or node defines");
      }
      ++missing[i];
      users[it->second].push_back(i);
    }
  }
  std::vector<size_t> ready;
  for (size_t i = nodes.size(); i-- > 0;)
    if (missing[i] == 0) ready.push_back(i);
  std::vector<size_t> order;
  while (!ready.empty()) {
    const size_t i = ready.back();
    ready.pop_back();
    order.push_back(i);
    for (size_t u : users[i])
      if (--missing[u] == 0) ready.push_back(u);
  }
  if (order.size() != nodes.size()) {
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (missing[i] != 0) {
        fail(ErrorCode::ParseError, source + ": the graph has a cycle: " + node_label(nodes[i]) +
                                        " depends on its own output through other nodes");
      }
    }
  }
  for (size_t i : order) g.nodes.push_back(std::move(nodes[i]));
  for (const Node& n : g.nodes)
    for (const auto& o : n.outputs) defined.insert(o);
  for (const Port& o : g.outputs) {
    if (!defined.count(o.name)) {
      fail(ErrorCode::ParseError, source + ": output '" + o.name + "' is not defined by any node, input or initializer");
    }
  }
  return g;
}

}  // namespace rungs::onnx_import
