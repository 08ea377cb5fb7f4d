// core/model/model.cpp: Model (description + weights), load_model, save_model.
#include "rungs/model.hpp"

#include <filesystem>
#include <map>

#include "core/check.hpp"
#include "core/model/model_spec.hpp"
#include "core/model/safetensors.hpp"

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
  model::ModelSpec spec;
  std::string source;                // the description's name in messages
  std::vector<ModelParam> params;    // creation order
  std::vector<size_t> param_block;   // the block that creates params[i]
  ParamMap weights;
  bool has_weights = false;
};

namespace {

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
  // Context is added once: the graph's own errors already name the input or output at fault
  // ("input 'x': shape ..."), so those get the file and extent only; a block gets its place in
  // the file too.
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
      fail(e.code(), where(model::block_label(spec, i)) + ": " + e.what());
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

// Checks the description against the HirModule it builds and records its params. A bucketed
// model is built at two extents: a param whose shape follows the bucket dim cannot have weights.
void resolve_params(Model::Impl& impl) {
  const auto& spec = impl.spec;
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
  impl.param_block.clear();
  size_t block = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    while (block < counts.size() && counts[block] <= i) ++block;
    if (auto it = seen.find(params[i].first); it != seen.end()) {
      fail(ErrorCode::ParseError, impl.source + ": " + model::block_label(spec, block) + ": param '" +
                                      params[i].first + "' is already created by " +
                                      model::block_label(spec, impl.param_block[it->second]) +
                                      "; give the blocks distinct names");
    }
    seen[params[i].first] = i;
    impl.params.push_back({params[i].first, params[i].second, TensorDType::F32});
    impl.param_block.push_back(block);
  }
}

std::string param_text(const Model::Impl& impl, size_t i) {
  return "'" + impl.params[i].name + "' " + shape_to_string(impl.params[i].shape) + " (created by " +
         model::block_label(impl.spec, impl.param_block[i]) + ")";
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
                                      shape_to_string(impl.params[i].shape) + " (created by " +
                                      model::block_label(impl.spec, impl.param_block[i]) + ")");
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
  if (impl.spec.bucket_dim.empty()) return 1;
  if (extent < 1 || extent > Model::max_extent()) {
    fail(ErrorCode::OutOfRange, "model '" + impl.spec.name + "': extent " + std::to_string(extent) +
                                    " for bucket dim '" + impl.spec.bucket_dim + "' is outside [1, " +
                                    std::to_string(Model::max_extent()) + "]");
  }
  return static_cast<int64_t>(extent);
}

std::unique_ptr<Model::Impl> parse_impl(std::string_view json_text, std::string_view source) {
  auto impl = std::make_unique<Model::Impl>();
  impl->source = std::string(source);
  impl->spec = model::parse_spec(json_text, source);
  resolve_params(*impl);
  if (impl->params.empty()) impl->has_weights = true;  // nothing to load
  return impl;
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

const std::string& Model::name() const { return impl_->spec.name; }
const std::string& Model::bucket_dim() const { return impl_->spec.bucket_dim; }
const std::string& Model::description() const { return impl_->spec.description; }

std::vector<ModelInput> Model::inputs(uint64_t extent) const {
  const int64_t e = checked_extent(*impl_, extent);
  std::vector<ModelInput> out;
  for (const auto& in : impl_->spec.inputs) out.push_back({in.name, shape_at(in.shape, e)});
  return out;
}

std::vector<std::string> Model::output_names() const {
  std::vector<std::string> out;
  for (const auto& o : impl_->spec.outputs) out.push_back(o.name);
  return out;
}

const std::vector<ModelParam>& Model::params() const { return impl_->params; }

size_t Model::param_count() const {
  size_t n = 0;
  for (const auto& p : impl_->params) n += static_cast<size_t>(shape_numel(p.shape));
  return n;
}

HirModule Model::build_module(uint64_t extent) const {
  return build_at(impl_->spec, "model '" + impl_->spec.name + "'", checked_extent(*impl_, extent), nullptr);
}

std::pair<HirModule, ParamMap> Model::build(uint64_t extent) const {
  if (!impl_->has_weights) {
    fail(ErrorCode::ParamNotSet, "model '" + impl_->spec.name +
                                     "': build needs weights; load the model with load_model or call set_weights");
  }
  HirModule m = build_module(extent);
  return {std::move(m), impl_->weights};
}

bool Model::has_weights() const { return impl_->has_weights; }
const ParamMap& Model::weights() const { return impl_->weights; }

void Model::set_weights(ParamMap weights, TensorDType stored) {
  const std::string who = "model '" + impl_->spec.name + "': set_weights: ";
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
  return model::spec_to_json(impl_->spec, weights_file);
}

Model load_model(const std::string& path) {
  const auto bytes = safetensors::read_bytes(path, kMaxDescriptionBytes);
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  auto impl = parse_impl(text, path);
  const std::string& weights = impl->spec.weights;
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
