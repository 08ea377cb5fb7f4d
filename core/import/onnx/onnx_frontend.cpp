// SPDX-License-Identifier: Apache-2.0
// core/import/onnx/onnx_frontend.cpp: the ONNX frontend (docs/onnx.md).
//
// load_onnx reads the file once (onnx_graph.cpp), resolves the symbolic dims (`fix`, the bucket
// dim) and checks the result by building at two probe extents. build(extent) binds the bucket
// symbol and walks the nodes in order with every input's shape known: a node whose inputs are
// all constant and whose op is shape arithmetic is evaluated here (Shape, Gather, Concat, Range,
// ...), so what reaches the Graph is static; every other node maps onto Graph ops. The walk is
// the Builder's (onnx_builder.hpp), whose op table and op families have files of their own
// (onnx_builder.cpp, onnx_ops_*.cpp); this file keeps build_module, GraphFrontend and load_onnx.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include "core/check.hpp"
#include "core/import/onnx/onnx_builder.hpp"
#include "core/import/onnx/onnx_graph.hpp"
#include "core/model/frontend.hpp"

namespace rungs::onnx_import {

using detail::join;

namespace {

ElementType element_type(int onnx_type) {
  switch (onnx_type) {
    case kInt64: return ElementType::I64;
    case kInt32: return ElementType::I32;
    case kBool: return ElementType::Bool;
    default: return ElementType::F32;
  }
}

bool batch_like(const std::string& symbol) {
  std::string s;
  for (char c : symbol) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const std::set<std::string> names = {"batch", "batch_size", "batchsize", "n", "b", "bs", "nbatch",
                                              "num_batches", "batch_dim"};
  return names.count(s) > 0;
}

// The symbols of the graph's inputs, in order of first appearance.
std::vector<std::string> symbols_of(const OnnxGraph& g, const std::string& source) {
  std::vector<std::string> out;
  for (const Port& p : g.inputs) {
    for (size_t i = 0; i < p.dims.size(); ++i) {
      const Dim& d = p.dims[i];
      if (d.value >= 0) continue;
      if (d.symbol.empty()) {
        fail(ErrorCode::Unsupported, source + ": input '" + p.name + "' axis " + std::to_string(i) +
                                         " has neither a size nor a name; name it (a dynamic axis) when "
                                         "exporting, e.g. dynamic_axes={'" + p.name + "': {" + std::to_string(i) +
                                         ": 'seq'}}");
      }
      if (std::find(out.begin(), out.end(), d.symbol) == out.end()) out.push_back(d.symbol);
    }
  }
  return out;
}

}  // namespace

HirModule build_module(const OnnxGraph& g, const std::string& where, const std::map<std::string, int64_t>& symbols,
                       std::vector<model::Frontend::Role>* roles) {
  detail::Builder b(g, where, symbols, roles);
  return b.build();
}

std::vector<ModelInput> GraphFrontend::inputs(int64_t extent) const {
  std::vector<ModelInput> out;
  for (const Port& p : g.inputs) {
    Shape s;
    for (const Dim& d : p.dims) s.push_back(d.value >= 0 ? d.value : d.symbol == bucket_ ? extent
                                                                                         : fixed.at(d.symbol));
    out.push_back({p.name, s, element_type(p.elem_type)});
  }
  return out;
}

std::vector<std::string> GraphFrontend::output_names() const {
  std::vector<std::string> out;
  for (const Port& p : g.outputs) out.push_back(p.name);
  return out;
}

std::vector<ElementType> GraphFrontend::output_types() const {
  std::vector<ElementType> out;
  for (const Port& p : g.outputs) out.push_back(element_type(p.elem_type));
  return out;
}

const OnnxGraph& GraphFrontend::graph_at(int64_t, OnnxGraph&) const { return g; }

model::LoadedFrontend loaded(std::shared_ptr<GraphFrontend> f) {
  model::LoadedFrontend out;
  out.weights = std::move(f->g.weight_values);
  out.stored = f->g.stored;
  f->g.weight_values.clear();
  out.frontend = std::move(f);
  return out;
}

HirModule GraphFrontend::build_roles(int64_t extent, std::vector<Role>* r) const {
  std::map<std::string, int64_t> symbols = fixed;
  if (!bucket_.empty()) symbols[bucket_] = extent;
  const std::string where = bucket_.empty() ? source : source + " (at " + bucket_ + "=" + std::to_string(extent) + ")";
  OnnxGraph scratch;
  return build_module(graph_at(extent, scratch), where, symbols, r);
}

namespace {

class OnnxFrontend final : public GraphFrontend {
 public:
  std::string_view format() const override { return "onnx"; }
  std::string param_origin(const std::string& param) const override { return "initializer '" + param + "'"; }
};

}  // namespace

}  // namespace rungs::onnx_import

namespace rungs::model {

LoadedFrontend load_onnx(std::span<const uint8_t> bytes, const LoadOptions& options, const std::string& source,
                         const std::string& base_dir) {
  using namespace onnx_import;
  auto f = std::make_shared<OnnxFrontend>();
  f->g = read_graph(bytes, options, source, base_dir);
  f->source = source;
  f->name_ = std::filesystem::path(source).stem().string();
  f->description_ = f->g.doc.empty() ? "ONNX model" + (f->g.producer.empty() ? std::string() : " from " + f->g.producer) +
                                           ", opset " + std::to_string(f->g.opset)
                                     : f->g.doc;
  // Symbols: `fix` first, batch-like ones default to 1, the bucket dim is what is left.
  const std::vector<std::string> symbols = symbols_of(f->g, source);
  const std::string listed = symbols.empty() ? "none" : join(symbols);
  for (const auto& [sym, value] : options.fix) {
    if (std::find(symbols.begin(), symbols.end(), sym) == symbols.end()) {
      fail(ErrorCode::InvalidArgument, source + ": fix: '" + sym + "' is not a symbolic dim of the model's inputs (they are: " + listed + ")");
    }
    if (value < 1 || value > kMaxDim) {
      fail(ErrorCode::InvalidArgument, source + ": fix: " + sym + "=" + std::to_string(value) + " is outside [1, " + std::to_string(kMaxDim) + "]");
    }
    f->fixed[sym] = value;
  }
  if (!options.bucket_dim.empty()) {
    if (std::find(symbols.begin(), symbols.end(), options.bucket_dim) == symbols.end()) {
      fail(ErrorCode::InvalidArgument, source + ": bucket_dim: '" + options.bucket_dim + "' is not a symbolic dim of the model's inputs (they are: " + listed + ")");
    }
    if (f->fixed.count(options.bucket_dim)) {
      fail(ErrorCode::InvalidArgument, source + ": '" + options.bucket_dim + "' is both the bucket dim and fixed");
    }
    f->bucket_ = options.bucket_dim;
  }
  std::vector<std::string> left;
  for (const std::string& s : symbols) {
    if (f->fixed.count(s) || s == f->bucket_) continue;
    if (batch_like(s) && (symbols.size() > 1 || !f->bucket_.empty())) {
      f->fixed[s] = 1;
      continue;
    }
    left.push_back(s);
  }
  if (f->bucket_.empty()) {
    if (left.size() > 1) {
      fail(ErrorCode::InvalidArgument, source + ": the bucket dim is ambiguous: the symbolic dims " + join(left) +
                                           " are left; choose one with --bucket-dim NAME (LoadOptions::bucket_dim) "
                                           "and fix the others with --fix NAME=VALUE (LoadOptions::fix)");
    }
    if (left.size() == 1) f->bucket_ = left[0];
  } else if (!left.empty()) {
    fail(ErrorCode::InvalidArgument, source + ": the symbolic dims " + join(left) + " are neither the bucket dim '" +
                                         f->bucket_ + "' nor fixed; fix them with --fix NAME=VALUE (LoadOptions::fix)");
  }
  // Roles: what the inputs feed (found by one build), masks by name.
  f->roles.assign(f->g.inputs.size(), {});
  f->build_roles(2, &f->roles);
  for (size_t i = 0; i < f->g.inputs.size(); ++i) {
    std::string n;
    for (char c : f->g.inputs[i].name) n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (f->roles[i].role == InputRole::Values && n.find("mask") != std::string::npos) f->roles[i].role = InputRole::Mask;
  }
  return loaded(std::move(f));
}

}  // namespace rungs::model
