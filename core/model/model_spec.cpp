// SPDX-License-Identifier: Apache-2.0
// core/model/model_spec.cpp: model description JSON <-> ModelSpec, with field-path errors.
#include "core/model/model_spec.hpp"

#include <cmath>
#include <map>
#include <set>

#include "core/check.hpp"
#include "core/model/json_util.hpp"

namespace rungs::model {
namespace {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

constexpr std::pair<BlockOp, std::string_view> kOps[] = {
    {BlockOp::Linear, "linear"},       {BlockOp::LayerNorm, "layer_norm"}, {BlockOp::RmsNorm, "rms_norm"},
    {BlockOp::SelfAttention, "self_attention"}, {BlockOp::Mlp, "mlp"},   {BlockOp::Embedding, "embedding"},
    {BlockOp::MeanPool, "mean_pool"},  {BlockOp::Add, "add"},
};
constexpr std::pair<Activation, std::string_view> kActs[] = {
    {Activation::None, "none"}, {Activation::Relu, "relu"}, {Activation::Gelu, "gelu"},
    {Activation::GeluTanh, "gelu_tanh"}, {Activation::Silu, "silu"}, {Activation::Tanh, "tanh"},
    {Activation::Sigmoid, "sigmoid"},
};

bool valid_name(const std::string& s) {
  if (s.empty() || s.size() > kMaxNameLength) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
              c == '-' || c == '/' || c == ':';
    if (!ok) return false;
  }
  return true;
}

// One JSON object being read: hands out its fields by name with the field path in every error,
// then refuses the fields nobody asked for (typos such as "head" for "heads").
class Fields {
 public:
  Fields(const json& j, std::string path, std::string_view source) : j_(j), path_(std::move(path)), source_(source) {
    if (!j_.is_object()) bad(path_, "expected an object", j_);
  }

  [[noreturn]] void bad(const std::string& path, const std::string& expected, const json& got) const {
    fail(ErrorCode::ParseError, std::string(source_) + ": " + path + ": " + expected + ", got " +
                                    model_json::preview(got) + " (" + model_json::kind(got) + ")");
  }
  [[noreturn]] void bad_msg(const std::string& path, const std::string& msg) const {
    fail(ErrorCode::ParseError, std::string(source_) + ": " + path + ": " + msg);
  }
  std::string at(std::string_view key) const { return path_.empty() ? std::string(key) : path_ + "." + std::string(key); }
  const std::string& path() const { return path_; }

  const json* find(std::string_view key) {
    used_.insert(std::string(key));
    auto it = j_.find(std::string(key));
    return it == j_.end() ? nullptr : &*it;
  }
  const json& need(std::string_view key) {
    const json* v = find(key);
    if (!v) bad_msg(at(key), "missing (required)");
    return *v;
  }

  std::string string(std::string_view key) {
    const json& v = need(key);
    if (!v.is_string()) bad(at(key), "expected a string", v);
    return v.get<std::string>();
  }
  std::optional<std::string> opt_string(std::string_view key) {
    const json* v = find(key);
    if (!v || v->is_null()) return std::nullopt;
    if (!v->is_string()) bad(at(key), "expected a string", *v);
    return v->get<std::string>();
  }
  std::string name(std::string_view key) {
    std::string s = string(key);
    if (!valid_name(s)) {
      bad(at(key), "expected a name of 1 to " + std::to_string(kMaxNameLength) +
                       " characters from A-Z a-z 0-9 _ . - / :", need(key));
    }
    return s;
  }
  int64_t positive(std::string_view key, int64_t max = kMaxSize) {
    const json& v = need(key);
    int64_t n = 0;
    if (!model_json::as_int64(v, n) || n < 1 || n > max) {
      bad(at(key), "expected a positive integer <= " + std::to_string(max), v);
    }
    return n;
  }
  bool boolean(std::string_view key, bool dflt) {
    const json* v = find(key);
    if (!v) return dflt;
    if (!v->is_boolean()) bad(at(key), "expected true or false", *v);
    return v->get<bool>();
  }
  double positive_number(std::string_view key, double dflt) {
    const json* v = find(key);
    if (!v) return dflt;
    if (!v->is_number() || !(v->get<double>() > 0) || !std::isfinite(v->get<double>()) ||
        v->get<double>() > 1.0) {
      bad(at(key), "expected a number in (0, 1]", *v);
    }
    return v->get<double>();
  }
  Activation activation(std::string_view key, Activation dflt) {
    const json* v = find(key);
    if (!v) return dflt;
    if (v->is_string()) {
      for (auto [a, n] : kActs) {
        if (v->get<std::string>() == n) return a;
      }
    }
    bad(at(key), "expected one of \"none\", \"relu\", \"gelu\", \"gelu_tanh\", \"silu\", \"tanh\", \"sigmoid\"", *v);
  }

  // Refuses any field not read above.
  void done() const {
    for (auto it = j_.begin(); it != j_.end(); ++it) {
      if (!used_.count(it.key())) {
        std::string known;
        for (const auto& k : used_) known += (known.empty() ? "" : ", ") + k;
        bad_msg(at(it.key()), "unknown field (known here: " + known + ")");
      }
    }
  }

 private:
  const json& j_;
  std::string path_;
  std::string_view source_;
  std::set<std::string> used_;
};

std::vector<Dim> parse_shape(Fields& f, const std::string& bucket_dim) {
  const json& v = f.need("shape");
  const std::string path = f.at("shape");
  if (!v.is_array()) f.bad(path, "expected an array of dims", v);
  if (v.size() > static_cast<size_t>(kMaxRank)) f.bad(path, "expected at most " + std::to_string(kMaxRank) + " dims", v);
  std::vector<Dim> shape;
  for (size_t i = 0; i < v.size(); ++i) {
    const json& d = v[i];
    const std::string p = path + "[" + std::to_string(i) + "]";
    int64_t n = 0;
    if (d.is_string()) {
      if (bucket_dim.empty()) {
        f.bad(p, "expected a positive integer (the model declares no bucket_dim, so no symbolic dims)", d);
      }
      if (d.get<std::string>() != bucket_dim) {
        f.bad(p, "expected a positive integer or the bucket dim \"" + bucket_dim + "\"", d);
      }
      shape.push_back({0, true});
    } else if (model_json::as_int64(d, n) && n >= 1 && n <= kMaxSize) {
      shape.push_back({n, false});
    } else {
      f.bad(p, "expected a positive integer <= " + std::to_string(kMaxSize) +
                   (bucket_dim.empty() ? std::string() : " or \"" + bucket_dim + "\""),
            d);
    }
  }
  return shape;
}

// Value names defined so far, for reference checks and "did you mean" lists.
class Scope {
 public:
  void define(Fields& f, const std::string& key_path, const std::string& name) {
    if (!defined_.insert(name).second) f.bad_msg(key_path, "value '" + name + "' is already defined");
    order_.push_back(name);
  }
  void use(Fields& f, const std::string& key_path, const std::string& name) const {
    if (defined_.count(name)) return;
    std::string known;
    for (size_t i = 0; i < order_.size() && i < 12; ++i) known += (i ? ", " : "") + order_[i];
    if (order_.size() > 12) known += ", ...";
    f.bad_msg(key_path, "unknown value '" + name + "' (defined before this point: " + known + ")");
  }

 private:
  std::set<std::string> defined_;
  std::vector<std::string> order_;
};

BlockSpec parse_block(const json& j, size_t index, std::string_view source, Scope& scope) {
  Fields f(j, "blocks[" + std::to_string(index) + "]", source);
  BlockSpec b;
  const json& opv = f.need("op");
  bool found = false;
  if (opv.is_string()) {
    for (auto [op, n] : kOps) {
      if (opv.get<std::string>() == n) {
        b.op = op;
        found = true;
      }
    }
  }
  if (!found) {
    f.bad(f.at("op"),
          "expected one of \"linear\", \"layer_norm\", \"rms_norm\", \"self_attention\", \"mlp\", \"embedding\", "
          "\"mean_pool\", \"add\"",
          opv);
  }
  const bool has_params = b.op != BlockOp::MeanPool && b.op != BlockOp::Add;
  if (has_params) b.name = f.name("name");

  if (b.op == BlockOp::Add) {
    const json& v = f.need("inputs");
    if (!v.is_array() || v.size() != 2 || !v[0].is_string() || !v[1].is_string()) {
      f.bad(f.at("inputs"), "expected two value names [a, b]", v);
    }
    for (size_t i = 0; i < 2; ++i) {
      b.inputs.push_back(v[i].get<std::string>());
      scope.use(f, f.at("inputs") + "[" + std::to_string(i) + "]", b.inputs.back());
    }
  } else {
    b.inputs.push_back(f.string("input"));
    scope.use(f, f.at("input"), b.inputs.back());
  }

  switch (b.op) {
    case BlockOp::Linear:
      b.size = f.positive("out_features");
      b.act = f.activation("activation", Activation::None);
      b.bias = f.boolean("bias", true);
      break;
    case BlockOp::LayerNorm:
      b.eps = f.positive_number("eps", 1e-5);
      break;
    case BlockOp::RmsNorm:
      b.eps = f.positive_number("eps", 1e-6);
      break;
    case BlockOp::SelfAttention:
      b.heads = static_cast<int>(f.positive("heads", 4096));
      b.mask = f.opt_string("mask");
      b.causal = f.boolean("causal", false);
      break;
    case BlockOp::Mlp:
      b.size = f.positive("hidden");
      b.act = f.activation("activation", Activation::Gelu);
      break;
    case BlockOp::Embedding:
      b.vocab = f.positive("vocab");
      b.size = f.positive("dim");
      break;
    case BlockOp::MeanPool:
      b.mask = f.opt_string("mask");
      break;
    case BlockOp::Add:
      break;
  }
  if (b.mask) scope.use(f, f.at("mask"), *b.mask);
  b.out = f.name("out");
  scope.define(f, f.at("out"), b.out);
  f.done();
  return b;
}

// Compact one-line JSON with a space after ':' and ',' (nlohmann's compact dump has none).
std::string inline_dump(const ojson& j) {
  if (j.is_object()) {
    std::string s = "{";
    bool first = true;
    for (auto it = j.begin(); it != j.end(); ++it) {
      s += (first ? "" : ", ") + ojson(it.key()).dump() + ": " + inline_dump(*it);
      first = false;
    }
    return s + "}";
  }
  if (j.is_array()) {
    std::string s = "[";
    for (size_t i = 0; i < j.size(); ++i) s += (i ? ", " : "") + inline_dump(j[i]);
    return s + "]";
  }
  return j.dump();
}

}  // namespace

std::string_view op_name(BlockOp op) {
  for (auto [o, n] : kOps) {
    if (o == op) return n;
  }
  return "?";
}

std::string_view activation_name(Activation a) {
  for (auto [x, n] : kActs) {
    if (x == a) return n;
  }
  return "?";
}

std::string block_label(const ModelSpec& spec, size_t index) {
  const BlockSpec& b = spec.blocks.at(index);
  std::string s = "blocks[" + std::to_string(index) + "] (" + std::string(op_name(b.op));
  if (!b.name.empty()) s += " '" + b.name + "'";
  return s + ")";
}

ModelSpec parse_spec(std::string_view text, std::string_view source) {
  const json root = model_json::parse_strict(text, source, "model description");
  if (!root.is_object()) {
    fail(ErrorCode::ParseError, std::string(source) + ": expected a JSON object {\"format\": \"rungs-model\", ...}, got " +
                                    model_json::kind(root));
  }
  Fields f(root, "", source);

  ModelSpec spec;
  const json& fmt = f.need("format");
  if (!fmt.is_string() || fmt.get<std::string>() != "rungs-model") f.bad("format", "expected \"rungs-model\"", fmt);
  const json& ver = f.need("version");
  int64_t v = 0;
  if (!model_json::as_int64(ver, v) || v != kFormatVersion) {
    f.bad("version", "expected " + std::to_string(kFormatVersion) + " (the version this rungs reads)", ver);
  }
  spec.name = f.name("name");
  spec.description = f.opt_string("description").value_or("");
  if (auto bd = f.opt_string("bucket_dim")) {
    if (!valid_name(*bd)) f.bad("bucket_dim", "expected a name such as \"seq\" or \"rows\"", f.need("bucket_dim"));
    spec.bucket_dim = *bd;
  }

  Scope scope;
  const json& ins = f.need("inputs");
  if (!ins.is_array() || ins.empty()) f.bad("inputs", "expected a non-empty array of {name, shape}", ins);
  bool uses_bucket = false;
  for (size_t i = 0; i < ins.size(); ++i) {
    Fields fi(ins[i], "inputs[" + std::to_string(i) + "]", source);
    InputSpec in;
    in.name = fi.name("name");
    in.shape = parse_shape(fi, spec.bucket_dim);
    for (const Dim& d : in.shape) uses_bucket |= d.bucket;
    scope.define(fi, fi.at("name"), in.name);
    fi.done();
    spec.inputs.push_back(std::move(in));
  }
  if (!spec.bucket_dim.empty() && !uses_bucket) {
    f.bad_msg("bucket_dim", "\"" + spec.bucket_dim + "\" is declared but no input shape uses it");
  }

  const json& blocks = f.need("blocks");
  if (!blocks.is_array()) f.bad("blocks", "expected an array of blocks", blocks);
  for (size_t i = 0; i < blocks.size(); ++i) spec.blocks.push_back(parse_block(blocks[i], i, source, scope));

  const json& outs = f.need("outputs");
  if (!outs.is_array() || outs.empty()) f.bad("outputs", "expected a non-empty array of {name, value}", outs);
  std::set<std::string> out_names;
  for (size_t i = 0; i < outs.size(); ++i) {
    Fields fo(outs[i], "outputs[" + std::to_string(i) + "]", source);
    OutputSpec o;
    o.name = fo.name("name");
    o.value = fo.opt_string("value").value_or(o.name);
    scope.use(fo, fo.at("value"), o.value);
    if (!out_names.insert(o.name).second) fo.bad_msg(fo.at("name"), "output '" + o.name + "' is declared twice");
    fo.done();
    spec.outputs.push_back(std::move(o));
  }

  if (auto w = f.opt_string("weights")) {
    if (w->empty() || w->size() > 4096) f.bad("weights", "expected a file name", f.need("weights"));
    spec.weights = *w;
  }
  f.done();
  return spec;
}

std::string spec_to_json(const ModelSpec& spec, std::string_view weights_file) {
  auto shape_json = [&](const std::vector<Dim>& shape) {
    ojson a = ojson::array();
    for (const Dim& d : shape) {
      if (d.bucket) a.push_back(spec.bucket_dim);
      else a.push_back(d.size);
    }
    return a;
  };
  std::string s = "{\n";
  auto field = [&](const char* key, const ojson& v) { s += "  " + ojson(key).dump() + ": " + inline_dump(v) + ",\n"; };
  auto list = [&](const char* key, const std::vector<ojson>& items, bool last) {
    s += "  " + ojson(key).dump() + ": [\n";
    for (size_t i = 0; i < items.size(); ++i) s += "    " + inline_dump(items[i]) + (i + 1 < items.size() ? ",\n" : "\n");
    s += std::string("  ]") + (last ? "\n" : ",\n");
  };

  field("format", "rungs-model");
  field("version", kFormatVersion);
  field("name", spec.name);
  if (!spec.description.empty()) field("description", spec.description);
  if (!spec.bucket_dim.empty()) field("bucket_dim", spec.bucket_dim);

  std::vector<ojson> items;
  for (const InputSpec& in : spec.inputs) items.push_back(ojson{{"name", in.name}, {"shape", shape_json(in.shape)}});
  list("inputs", items, false);

  items.clear();
  for (const BlockSpec& b : spec.blocks) {
    ojson j;
    j["op"] = std::string(op_name(b.op));
    if (!b.name.empty()) j["name"] = b.name;
    if (b.op == BlockOp::Add) j["inputs"] = b.inputs;
    else j["input"] = b.inputs.at(0);
    switch (b.op) {
      case BlockOp::Linear:
        j["out_features"] = b.size;
        j["activation"] = std::string(activation_name(b.act));
        j["bias"] = b.bias;
        break;
      case BlockOp::LayerNorm:
      case BlockOp::RmsNorm:
        j["eps"] = b.eps;
        break;
      case BlockOp::SelfAttention:
        j["heads"] = b.heads;
        if (b.mask) j["mask"] = *b.mask;
        j["causal"] = b.causal;
        break;
      case BlockOp::Mlp:
        j["hidden"] = b.size;
        j["activation"] = std::string(activation_name(b.act));
        break;
      case BlockOp::Embedding:
        j["vocab"] = b.vocab;
        j["dim"] = b.size;
        break;
      case BlockOp::MeanPool:
        if (b.mask) j["mask"] = *b.mask;
        break;
      case BlockOp::Add:
        break;
    }
    j["out"] = b.out;
    items.push_back(std::move(j));
  }
  list("blocks", items, false);

  items.clear();
  for (const OutputSpec& o : spec.outputs) items.push_back(ojson{{"name", o.name}, {"value", o.value}});
  const bool has_weights = !weights_file.empty();
  list("outputs", items, !has_weights);
  if (has_weights) s += "  \"weights\": " + ojson(std::string(weights_file)).dump() + "\n";
  s += "}\n";
  return s;
}

}  // namespace rungs::model
