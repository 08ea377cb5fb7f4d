// SPDX-License-Identifier: Apache-2.0
// core/model/model.cpp: Model (description + weights), load_model, save_model.
#include "rungs/model.hpp"

#include <filesystem>
#include <algorithm>
#include <map>
#include <optional>

#include "core/check.hpp"
#include "core/model/frontend.hpp"
#include "core/model/model_spec.hpp"
#include "core/model/safetensors.hpp"
#include "core/numeric/splitmix64.hpp"

namespace rungs {

std::string_view to_string(TensorDType dtype) {
  switch (dtype) {
    case TensorDType::F32: return "F32";
    case TensorDType::BF16: return "BF16";
    case TensorDType::F16: return "F16";
  }
  return "?";
}

struct Model::Impl {
  std::shared_ptr<const model::Frontend> frontend;  // immutable, shared between copies
  const model::ModelSpec* spec = nullptr;           // JSON models only: the description in frontend
  std::string source;                // the file's name in messages
  std::vector<ModelParam> params;    // creation order
  ParamMap weights;
  bool has_weights = false;
  // Along the bucket dim, found by building the module at two extents: per input and output, the
  // shape at extent kProbe and the axis that follows the bucket dim (-1: none).
  struct Port {
    Shape probe_shape;
    bool follows = false;  // the shape changes with the extent
    int axis = -1;         // the one axis that is the extent itself, -1: none
  };
  std::vector<Port> input_ports, output_ports;
  std::vector<InputRole> input_roles;
  std::vector<uint64_t> input_vocabs;
  std::vector<std::string> input_names;  // what cache_inputs' results view
};

namespace {

using model::Frontend;

constexpr uint64_t kMaxDescriptionBytes = 64u << 20;

Shape shape_at(const std::vector<model::Dim>& dims, int64_t extent) {
  Shape s;
  for (const model::Dim& d : dims) s.push_back(d.bucket ? extent : d.size);
  return s;
}

// Builds the module, reporting a failing block by its place in the file. `block_params`, when
// given, receives the number of params created so far after each block.
HirModule build_at(const model::ModelSpec& spec, const std::string& source, int64_t extent,
                   std::vector<size_t>* block_params) {
  HirModule m;
  std::map<std::string, Value> values;
  // Context is added once: the builder's own errors already name the op, block, input or output
  // at fault ("input 'x': shape ...", "self_attention 'att': heads=5 ..."), so they get the file,
  // a block's place in it and the extent only.
  const std::string at = spec.bucket_dim.empty() ? "" : " at " + spec.bucket_dim + "=" + std::to_string(extent);
  auto where = [&](const std::string& what) { return source + ": " + what + at; };
  for (const auto& in : spec.inputs) {
    try {
      values[in.name] = m.input(in.name, shape_at(in.shape, extent));
    } catch (const Error& e) {
      fail(e.code(), source + at + ": " + e.what());
    }
  }
  for (size_t i = 0; i < spec.blocks.size(); ++i) {
    const model::BlockSpec& b = spec.blocks[i];
    try {
      const Value x = values.at(b.inputs.at(0));
      std::optional<Value> mask;
      if (b.mask) mask = values.at(*b.mask);
      Value y{};
      switch (b.op) {
        case model::BlockOp::Linear: y = m.linear(x, b.name, b.size, b.act, b.bias); break;
        case model::BlockOp::LayerNorm: y = m.layer_norm(x, b.name, static_cast<float>(b.eps)); break;
        case model::BlockOp::RmsNorm: y = m.rms_norm(x, b.name, static_cast<float>(b.eps)); break;
        case model::BlockOp::SelfAttention: y = m.self_attention(x, b.name, b.heads, mask, b.causal); break;
        case model::BlockOp::Mlp: y = m.mlp(x, b.name, b.size, b.act); break;
        case model::BlockOp::Embedding: y = m.embedding(x, b.name, b.vocab, b.size); break;
        case model::BlockOp::MeanPool: y = m.mean_pool(x, mask); break;
        case model::BlockOp::Add: y = m.add(x, values.at(b.inputs.at(1))); break;
      }
      values[b.out] = y;
    } catch (const Error& e) {
      fail(e.code(), where("blocks[" + std::to_string(i) + "]") + ": " + e.what());
    }
    if (block_params) block_params->push_back(m.params().size());
  }
  for (const auto& o : spec.outputs) {
    try {
      m.output(o.name, values.at(o.value));
    } catch (const Error& e) {
      fail(e.code(), source + at + ": " + e.what());
    }
  }
  return m;
}

std::vector<Frontend::Role> json_roles(const model::ModelSpec& spec) {
  std::vector<Frontend::Role> out;
  for (const model::InputSpec& in : spec.inputs) {
    Frontend::Role r;
    for (const model::BlockSpec& block : spec.blocks) {
      if (block.mask == in.name) r.role = InputRole::Mask;
      if (block.op == model::BlockOp::Embedding && block.inputs.at(0) == in.name) {
        r.role = InputRole::Ids;
        const auto v = static_cast<uint64_t>(block.vocab);
        r.vocab = r.vocab ? std::min(r.vocab, v) : v;
      }
    }
    out.push_back(r);
  }
  return out;
}

// A JSON description (docs/model-format.md) as a Frontend.
class JsonFrontend final : public Frontend {
 public:
  model::ModelSpec spec;
  std::string source;
  std::vector<std::pair<std::string, size_t>> param_block;  // param -> the block that creates it

  std::string_view format() const override { return "json"; }
  const std::string& name() const override { return spec.name; }
  const std::string& bucket_dim() const override { return spec.bucket_dim; }
  const std::string& description() const override { return spec.description; }
  std::vector<ModelInput> inputs(int64_t extent) const override {
    std::vector<ModelInput> out;
    for (const auto& in : spec.inputs) out.push_back({in.name, shape_at(in.shape, extent), ElementType::F32});
    return out;
  }
  std::vector<std::string> output_names() const override {
    std::vector<std::string> out;
    for (const auto& o : spec.outputs) out.push_back(o.name);
    return out;
  }
  std::vector<ElementType> output_types() const override {
    return std::vector<ElementType>(spec.outputs.size(), ElementType::F32);
  }
  HirModule build(int64_t extent) const override {
    return build_at(spec, "model '" + spec.name + "'", extent, nullptr);
  }
  std::vector<Role> input_roles() const override { return json_roles(spec); }
  std::string param_origin(const std::string& param) const override {
    for (const auto& [name, block] : param_block)
      if (name == param) return "created by " + model::block_label(spec, block);
    return "not created by any block";
  }
};

// Checks the description against the HirModule it builds and records its params. A bucketed
// model is built at two extents: a param whose shape follows the bucket dim cannot have weights.
void resolve_params(Model::Impl& impl, JsonFrontend& json) {
  const auto& spec = json.spec;
  std::vector<size_t> counts;
  std::vector<std::pair<std::string, Shape>> params;
  const int64_t probe_a = 2, probe_b = 3;
  try {
    params = build_at(spec, impl.source, probe_a, &counts).params();
    if (!spec.bucket_dim.empty()) {
      const auto other = build_at(spec, impl.source, probe_b, nullptr).params();
      internal_check(other.size() == params.size(), "model: param count depends on the extent");
      for (size_t i = 0; i < params.size(); ++i) {
        if (other[i] != params[i]) {
          size_t block = 0;
          while (block < counts.size() && counts[block] <= i) ++block;
          fail(ErrorCode::ParseError,
               impl.source + ": " + model::block_label(spec, block) + ": param '" + params[i].first + "' has shape " +
                   shape_to_string(params[i].second) + " at " + spec.bucket_dim + "=" + std::to_string(probe_a) +
                   " but " + shape_to_string(other[i].second) + " at " + spec.bucket_dim + "=" +
                   std::to_string(probe_b) + ": a param's shape may not depend on the bucket dim");
        }
      }
    }
  } catch (const Error& e) {
    if (e.code() == ErrorCode::ParseError || e.code() == ErrorCode::Internal) throw;
    fail(ErrorCode::ParseError, e.what());  // the file describes a module the builder refuses
  }
  std::map<std::string, size_t> seen;
  impl.params.clear();
  json.param_block.clear();
  size_t block = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    while (block < counts.size() && counts[block] <= i) ++block;
    if (auto it = seen.find(params[i].first); it != seen.end()) {
      fail(ErrorCode::ParseError, impl.source + ": " + model::block_label(spec, block) + ": param '" +
                                      params[i].first + "' is already created by " +
                                      model::block_label(spec, json.param_block[it->second].second) +
                                      "; give the blocks distinct names");
    }
    seen[params[i].first] = i;
    impl.params.push_back({params[i].first, params[i].second, TensorDType::F32});
    json.param_block.emplace_back(params[i].first, block);
  }
}

// Any other frontend: the params the module creates at two probe extents, which must agree.
void resolve_frontend_params(Model::Impl& impl) {
  const Frontend& f = *impl.frontend;
  const auto a = f.build(2).params();
  if (!f.bucket_dim().empty()) {
    const auto b = f.build(3).params();
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
      if (a[i] != b[i]) {
        fail(ErrorCode::ParseError, impl.source + ": weight '" + a[i].first + "' has shape " +
                                        shape_to_string(a[i].second) + " at " + f.bucket_dim() + "=2 but '" +
                                        b[i].first + "' " + shape_to_string(b[i].second) + " at " +
                                        f.bucket_dim() + "=3: a weight's shape may not depend on the bucket dim");
      }
    }
    internal_check(a.size() == b.size(), "model: param count depends on the extent");
  }
  impl.params.clear();
  for (const auto& [name, shape] : a) impl.params.push_back({name, shape, TensorDType::F32});
}

std::string param_text(const Model::Impl& impl, size_t i) {
  return "'" + impl.params[i].name + "' " + shape_to_string(impl.params[i].shape) + " (" +
         impl.frontend->param_origin(impl.params[i].name) + ")";
}

// Matches a weights file against the params: exactly the same names, each with the same shape.
void attach_file(Model::Impl& impl, safetensors::File file, const std::string& weights_source) {
  std::map<std::string, safetensors::Tensor*> by_name;
  for (auto& t : file.tensors) by_name[t.name] = &t;
  for (size_t i = 0; i < impl.params.size(); ++i) {
    auto it = by_name.find(impl.params[i].name);
    if (it == by_name.end()) {
      fail(ErrorCode::ParseError,
           weights_source + ": missing tensor " + param_text(impl, i) + " that " + impl.source + " needs");
    }
    if (it->second->shape != impl.params[i].shape) {
      fail(ErrorCode::ParseError, weights_source + ": tensor '" + impl.params[i].name + "' has shape " +
                                      shape_to_string(it->second->shape) + ", but " + impl.source + " expects " +
                                      shape_to_string(impl.params[i].shape) + " (" +
                                      impl.frontend->param_origin(impl.params[i].name) + ")");
    }
  }
  if (file.tensors.size() != impl.params.size()) {
    for (const auto& t : file.tensors) {
      bool known = false;
      for (const auto& p : impl.params) known |= p.name == t.name;
      if (!known) {
        fail(ErrorCode::ParseError, weights_source + ": unexpected tensor '" + t.name + "' " +
                                        shape_to_string(t.shape) + ": " + impl.source +
                                        " creates no param of that name");
      }
    }
  }
  ParamMap weights;
  for (auto& p : impl.params) {
    safetensors::Tensor* t = by_name.at(p.name);
    p.dtype = t->dtype;
    weights[p.name] = std::move(t->data);
  }
  impl.weights = std::move(weights);
  impl.has_weights = true;
}

int64_t checked_extent(const Model::Impl& impl, uint64_t extent) {
  if (impl.frontend->bucket_dim().empty()) return 1;
  if (extent < 1 || extent > Model::max_extent()) {
    fail(ErrorCode::OutOfRange, "model '" + impl.frontend->name() + "': extent " + std::to_string(extent) +
                                    " for bucket dim '" + impl.frontend->bucket_dim() + "' is outside [1, " +
                                    std::to_string(Model::max_extent()) + "]");
  }
  return static_cast<int64_t>(extent);
}

constexpr int64_t kProbe = 2;

// The ports' bucket axes: the axis whose size is the extent itself at two extents (a module has
// no block that scales the bucket dim), and what each input feeds.
void resolve_layouts(Model::Impl& impl) {
  const Frontend& f = *impl.frontend;
  const Graph a = f.build(kProbe).lower();
  std::optional<Graph> b;
  if (!f.bucket_dim().empty()) b = f.build(kProbe + 1).lower();
  auto ports = [&](const std::vector<std::pair<std::string, Shape>>& at_a,
                   const std::vector<std::pair<std::string, Shape>>* at_b) {
    std::vector<Model::Impl::Port> out;
    for (size_t i = 0; i < at_a.size(); ++i) {
      Model::Impl::Port p{at_a[i].second, false, -1};
      int changed = 0;
      for (size_t k = 0; at_b && k < p.probe_shape.size(); ++k) {
        if ((*at_b)[i].second[k] == p.probe_shape[k]) continue;
        ++changed;
        if (p.probe_shape[k] == kProbe && (*at_b)[i].second[k] == kProbe + 1) p.axis = static_cast<int>(k);
      }
      p.follows = changed > 0;
      if (changed != 1) p.axis = -1;  // e.g. an input of [seq, seq]: no row layout
      out.push_back(std::move(p));
    }
    return out;
  };
  const auto ins_b = b ? b->inputs() : std::vector<std::pair<std::string, Shape>>{};
  const auto outs_b = b ? b->outputs() : std::vector<std::pair<std::string, Shape>>{};
  impl.input_ports = ports(a.inputs(), b ? &ins_b : nullptr);
  impl.output_ports = ports(a.outputs(), b ? &outs_b : nullptr);
  impl.input_roles.clear();
  impl.input_vocabs.clear();
  impl.input_names.clear();
  for (const auto& [name, shape] : a.inputs()) impl.input_names.push_back(name);
  for (const Frontend::Role& r : f.input_roles()) {
    impl.input_roles.push_back(r.role);
    impl.input_vocabs.push_back(r.vocab);
  }
}

// shapes: each port's shape at `extent`.
std::vector<BucketLayout> layouts(const std::vector<std::pair<std::string, Shape>>& shapes,
                                  const std::vector<Model::Impl::Port>& ports, int64_t extent,
                                  const std::vector<ElementType>& types) {
  std::vector<BucketLayout> out;
  for (size_t i = 0; i < ports.size(); ++i) {
    BucketLayout l{shapes[i].first, shapes[i].second, ports[i].follows, std::nullopt, types.at(i)};
    if (ports[i].axis >= 0) {
      const auto axis = static_cast<size_t>(ports[i].axis);
      bool rows = true;
      for (size_t k = 0; k < axis; ++k) rows = rows && l.shape[k] == 1;
      if (rows) l.row_values = static_cast<size_t>(shape_numel(l.shape) / extent);
    }
    out.push_back(std::move(l));
  }
  return out;
}

std::unique_ptr<Model::Impl> parse_impl(std::string_view json_text, std::string_view source) {
  auto impl = std::make_unique<Model::Impl>();
  impl->source = std::string(source);
  auto json = std::make_shared<JsonFrontend>();
  json->spec = model::parse_spec(json_text, source);
  json->source = impl->source;
  impl->frontend = json;
  impl->spec = &json->spec;
  resolve_params(*impl, *json);
  resolve_layouts(*impl);
  if (impl->params.empty()) impl->has_weights = true;  // nothing to load
  return impl;
}

// A model from any other frontend, with the weights it loaded.
std::unique_ptr<Model::Impl> frontend_impl(model::LoadedFrontend loaded, const std::string& source) {
  auto impl = std::make_unique<Model::Impl>();
  impl->source = source;
  impl->frontend = std::move(loaded.frontend);
  try {
    resolve_frontend_params(*impl);
    resolve_layouts(*impl);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::Internal) throw;
    fail(e.code(), e.what());
  }
  ParamMap weights;
  for (auto& p : impl->params) {
    auto it = loaded.weights.find(p.name);
    internal_check(it != loaded.weights.end(), "model: the frontend made a param without values");
    internal_check(it->second.size() == static_cast<size_t>(shape_numel(p.shape)), "model: param size");
    if (auto s = loaded.stored.find(p.name); s != loaded.stored.end()) p.dtype = s->second;
    weights[p.name] = std::move(it->second);
  }
  impl->weights = std::move(weights);
  impl->has_weights = true;
  return impl;
}

bool is_onnx_path(const std::string& path) {
  if (path.size() < 5) return false;
  std::string ext = path.substr(path.size() - 5);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".onnx";
}

}  // namespace

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::Model(const Model& other) : impl_(std::make_unique<Impl>(*other.impl_)) {}
Model& Model::operator=(const Model& other) {
  if (this != &other) impl_ = std::make_unique<Impl>(*other.impl_);
  return *this;
}
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;
Model::~Model() = default;

Model Model::parse(std::string_view json_text, std::string_view source) {
  return Model(parse_impl(json_text, source));
}

const std::string& Model::name() const { return impl_->frontend->name(); }
const std::string& Model::bucket_dim() const { return impl_->frontend->bucket_dim(); }
const std::string& Model::description() const { return impl_->frontend->description(); }

std::vector<ModelInput> Model::inputs(uint64_t extent) const {
  return impl_->frontend->inputs(checked_extent(*impl_, extent));
}

std::vector<std::string> Model::output_names() const { return impl_->frontend->output_names(); }

std::vector<BucketLayout> Model::input_layouts(uint64_t extent) const {
  const int64_t e = checked_extent(*impl_, extent);
  std::vector<std::pair<std::string, Shape>> shapes;
  std::vector<ElementType> types;
  for (auto& in : impl_->frontend->inputs(e)) {
    shapes.emplace_back(in.name, std::move(in.shape));
    types.push_back(in.dtype);
  }
  return layouts(shapes, impl_->input_ports, e, types);
}

std::vector<BucketLayout> Model::output_layouts(uint64_t extent) const {
  const int64_t e = checked_extent(*impl_, extent);
  bool substitutable = true;  // every output is its probe shape with the bucket axis set to e
  for (const auto& p : impl_->output_ports) substitutable = substitutable && (!p.follows || p.axis >= 0);
  const std::vector<ElementType> types = impl_->frontend->output_types();
  if (!substitutable) return layouts(build_module(extent).lower().outputs(), impl_->output_ports, e, types);
  std::vector<std::pair<std::string, Shape>> shapes;
  const std::vector<std::string> names = output_names();
  for (size_t i = 0; i < names.size(); ++i) {
    Shape s = impl_->output_ports[i].probe_shape;
    if (impl_->output_ports[i].axis >= 0) s[static_cast<size_t>(impl_->output_ports[i].axis)] = e;
    shapes.emplace_back(names[i], std::move(s));
  }
  return layouts(shapes, impl_->output_ports, e, types);
}

InputRole Model::input_role(size_t input) const { return impl_->input_roles.at(input); }
uint64_t Model::input_vocab(size_t input) const { return impl_->input_vocabs.at(input); }

std::vector<CacheRunInput> Model::cache_inputs(std::span<const std::vector<float>> data) const {
  const std::vector<BucketLayout> specs = input_layouts(kProbe);
  if (data.size() != specs.size()) {
    fail(ErrorCode::InvalidArgument, "model '" + name() + "': cache_inputs: " +
                                         std::to_string(data.size()) + " input vectors given, the model has " +
                                         std::to_string(specs.size()));
  }
  const std::vector<BucketLayout>& ls = specs;
  std::vector<CacheRunInput> out;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (ls[i].follows_bucket && !ls[i].row_values) {
      fail(ErrorCode::Unsupported, "model '" + name() + "': input '" + specs[i].name + "' " +
                                       shape_to_string(ls[i].shape) + " follows the bucket dim '" +
                                       bucket_dim() + "' after a non-1 axis; the cache pads whole rows only");
    }
    out.push_back({impl_->input_names[i], data[i], ls[i].row_values});
  }
  return out;
}

std::vector<size_t> Model::output_inners() const {
  std::vector<size_t> out;
  for (const BucketLayout& l : output_layouts(kProbe)) out.push_back(l.row_values.value_or(0));
  return out;
}

std::vector<std::vector<float>> Model::synthetic_inputs(uint64_t rows, uint64_t seed) const {
  const std::vector<BucketLayout> ls = input_layouts(bucket_dim().empty() ? 1 : rows);
  std::vector<std::vector<float>> out;
  for (size_t i = 0; i < ls.size(); ++i) {
    std::vector<float> v(static_cast<size_t>(shape_numel(ls[i].shape)));
    numeric::SplitMix64 rng{seed * 0xD1B54A32D192ED03ull + i};  // one stream per (seed, input)
    for (float& x : v) {
      const uint64_t z = rng.next();
      switch (impl_->input_roles[i]) {
        case InputRole::Mask: x = 1.f; break;
        case InputRole::Ids: x = static_cast<float>(z % impl_->input_vocabs[i]); break;
        case InputRole::Values: x = static_cast<float>(z >> 40 & 0xFFFF) / 32767.5f - 1.f; break;
      }
    }
    out.push_back(std::move(v));
  }
  return out;
}

const std::vector<ModelParam>& Model::params() const { return impl_->params; }

size_t Model::param_count() const {
  size_t n = 0;
  for (const auto& p : impl_->params) n += static_cast<size_t>(shape_numel(p.shape));
  return n;
}

HirModule Model::build_module(uint64_t extent) const {
  return impl_->frontend->build(checked_extent(*impl_, extent));
}

std::pair<HirModule, ParamMap> Model::build(uint64_t extent) const {
  if (!impl_->has_weights) {
    fail(ErrorCode::ParamNotSet, "model '" + name() +
                                     "': build needs weights; load the model with load_model or call set_weights");
  }
  HirModule m = build_module(extent);
  return {std::move(m), impl_->weights};
}

bool Model::has_weights() const { return impl_->has_weights; }
const ParamMap& Model::weights() const { return impl_->weights; }

void Model::set_weights(ParamMap weights, TensorDType stored) {
  const std::string who = "model '" + name() + "': set_weights: ";
  for (const auto& [name, data] : weights) {
    bool known = false;
    for (const auto& p : impl_->params) known |= p.name == name;
    if (!known) fail(ErrorCode::UnknownName, who + "'" + name + "' is not a param of the model");
  }
  for (size_t i = 0; i < impl_->params.size(); ++i) {
    const ModelParam& p = impl_->params[i];
    auto it = weights.find(p.name);
    if (it == weights.end()) fail(ErrorCode::MissingInput, who + "no values for param " + param_text(*impl_, i));
    const auto want = static_cast<size_t>(shape_numel(p.shape));
    if (it->second.size() != want) {
      fail(ErrorCode::ShapeMismatch, who + "param '" + p.name + "' has " + std::to_string(it->second.size()) +
                                         " values, expected " + std::to_string(want) + " (" +
                                         shape_to_string(p.shape) + ")");
    }
  }
  for (auto& p : impl_->params) p.dtype = stored;
  impl_->weights = std::move(weights);
  impl_->has_weights = true;
}

std::string Model::to_json(std::string_view weights_file) const {
  if (!impl_->spec) {
    fail(ErrorCode::Unsupported, "model '" + name() + "': to_json: the model was read from an " +
                                     std::string(impl_->frontend->format()) +
                                     " file and has no JSON description (keep using the file)");
  }
  return model::spec_to_json(*impl_->spec, weights_file);
}

// A TF.js graph model at `path` (model.json with a modelTopology), its shards read from beside it.
static std::unique_ptr<Model::Impl> tfjs_file_impl(const std::string& path, std::string_view text, const LoadOptions& options) {
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  const model::ShardReader read = [&](size_t, const std::string& shard) {
    return safetensors::read_bytes((dir / shard).string(), model::kMaxOnnxBytes);
  };
  return frontend_impl(model::load_tfjs(text, read, options, path), path);
}

Model load_model(const std::string& path, const LoadOptions& options) {
  if (!is_onnx_path(path)) {
    if (options.bucket_dim.empty() && options.fix.empty() && options.external_data.empty()) return load_model(path);
    // Options: a TF.js graph model checks them itself; a JSON description takes none.
    std::vector<uint8_t> bytes;
    try {
      bytes = safetensors::read_bytes(path, kMaxDescriptionBytes);
    } catch (const Error&) {
      bytes.clear();
    }
    const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    if (model::is_tfjs_model(text)) return Model(tfjs_file_impl(path, text, options));
    fail(ErrorCode::InvalidArgument, path +
                                         ": load options (bucket_dim, fix, external_data) apply to .onnx "
                                         "files and TF.js graph models only; a JSON description names its "
                                         "bucket dim itself");
  }
  const auto bytes = safetensors::read_bytes(path, model::kMaxOnnxBytes);
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return Model(frontend_impl(model::load_onnx(bytes, options, path, dir.empty() ? "." : dir), path));
}

Model load_model_from_onnx_bytes(std::span<const uint8_t> onnx, const LoadOptions& options, std::string_view name) {
  const std::string source = std::string(name) + ".onnx";
  return Model(frontend_impl(model::load_onnx(onnx, options, source, std::string()), source));
}

Model load_model_from_tfjs(std::string_view model_json, std::span<const std::vector<uint8_t>> shards,
                           std::string_view name) {
  const std::string source = std::string(name) + "/model.json";
  const model::ShardReader read = [&](size_t index, const std::string& shard) {
    if (index >= shards.size()) {
      fail(ErrorCode::InvalidArgument, source + ": the weightsManifest names shard " + std::to_string(index + 1) + " ('" +
                                           shard + "') but " + std::to_string(shards.size()) + " were given");
    }
    return shards[index];
  };
  return Model(frontend_impl(model::load_tfjs(model_json, read, LoadOptions{}, source), source));
}

Model load_model(const std::string& path) {
  if (is_onnx_path(path)) return load_model(path, LoadOptions{});
  const auto bytes = safetensors::read_bytes(path, kMaxDescriptionBytes);
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  if (model::is_tfjs_model(text)) return Model(tfjs_file_impl(path, text, LoadOptions{}));
  auto impl = parse_impl(text, path);
  const std::string& weights = impl->spec->weights;
  if (weights.empty()) {
    if (!impl->params.empty()) {
      fail(ErrorCode::ParseError, path + ": weights: missing; the model creates " +
                                      std::to_string(impl->params.size()) + " params (the first is '" +
                                      impl->params[0].name + "'), name their .safetensors file here");
    }
    return Model(std::move(impl));
  }
  const std::string weights_path =
      (std::filesystem::path(path).parent_path() / std::filesystem::path(weights)).string();
  attach_file(*impl, safetensors::read_file(weights_path), weights_path);
  return Model(std::move(impl));
}

Model load_model_from_bytes(std::string_view json_text, std::span<const uint8_t> safetensors_bytes,
                            std::string_view name) {
  const std::string base(name);
  auto impl = parse_impl(json_text, base + ".json");
  if (impl->params.empty() && safetensors_bytes.empty()) return Model(std::move(impl));
  const std::string weights_source = base + ".safetensors";
  attach_file(*impl, safetensors::read(safetensors_bytes, weights_source), weights_source);
  return Model(std::move(impl));
}

std::vector<uint8_t> model_weights_bytes(const Model& model, TensorDType dtype) {
  if (!model.has_weights()) {
    fail(ErrorCode::ParamNotSet, "model '" + model.name() + "': no weights to write; call set_weights first");
  }
  std::vector<safetensors::Tensor> tensors;
  for (const auto& p : model.params()) tensors.push_back({p.name, dtype, p.shape, model.weights().at(p.name)});
  return safetensors::write(tensors, {{"format", "rungs-model"}, {"model", model.name()}});
}

void save_model(const Model& model, const std::string& json_path, TensorDType dtype) {
  const auto bytes = model_weights_bytes(model, dtype);
  const std::filesystem::path jp(json_path);
  std::string weights_file = jp.stem().string() + ".safetensors";
  const std::string text = model.to_json(model.params().empty() ? std::string() : weights_file);
  if (!model.params().empty()) safetensors::write_bytes((jp.parent_path() / weights_file).string(), bytes);
  safetensors::write_bytes(json_path, std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

}  // namespace rungs
