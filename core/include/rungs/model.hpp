// SPDX-License-Identifier: Apache-2.0
// rungs/model.hpp: model files. A model is a JSON description of a HirModule whose shapes may
// name one symbolic bucket dimension (for example "seq"), with its weights in a .safetensors file
// beside it (docs/model-format.md), or an ONNX file whose symbolic dims are bound per extent
// (docs/onnx.md).
//
//   Model m = rungs::load_model("examples/models/encoder.json");
//   cache.ensure_hir_with_params(key, [&](uint64_t upper) { return m.build(upper); }, {});
//
// Every malformed file throws Error(ParseError) naming the file, the field or tensor at fault and
// what was expected, on any byte sequence.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rungs/cache.hpp"
#include "rungs/hir.hpp"
#include "rungs/types.hpp"

namespace rungs {

// How a tensor is stored in a .safetensors file. Values are always handed out as f32.
enum class TensorDType { F32, BF16, F16 };
std::string_view to_string(TensorDType dtype);  // "F32", "BF16", "F16" (the safetensors spelling)

struct ModelInput {
  std::string name;
  Shape shape;                          // at the extent asked for
  ElementType dtype = ElementType::F32;  // as the file declares it (JSON models: always F32)
};

// How an input or output lies along the model's bucket dim, so a client can pad, slice and make
// inputs without guessing from names or shapes.
struct BucketLayout {
  std::string name;
  Shape shape;                  // at the extent asked for
  bool follows_bucket = false;  // the shape changes with the extent
  // Values per row when the tensor is `extent` rows of the bucket dim (every axis before the
  // bucket axis has size 1), so it is padded by appending rows and an output is sliced back.
  // nullopt when it does not follow the bucket dim (passed through unpadded, returned whole) or
  // follows it on an inner axis (which cannot be padded by rows).
  std::optional<size_t> row_values;
  ElementType dtype = ElementType::F32;  // as the file declares it (JSON models: always F32)
};

// What an input feeds, so generated inputs are meaningful: token ids of an embedding (values in
// [0, vocab)), a keep mask of attention or mean_pool (1 keeps a row), or plain values.
enum class InputRole { Values, Ids, Mask };

struct ModelParam {
  std::string name;
  Shape shape;
  TensorDType dtype = TensorDType::F32;  // as stored in the weights file (F32 without weights)
};

// Options for loading a model. Only ONNX files use them today (docs/onnx.md).
struct LoadOptions {
  // The symbolic dim the cache buckets; empty: the only symbol left after `fix`.
  std::string bucket_dim;
  // Symbol -> value. A symbol named like a batch ("batch", "batch_size", "N", ...) defaults to 1.
  std::vector<std::pair<std::string, int64_t>> fix;
  // ONNX external-data tensors by their `location`: natively read from beside the model when
  // absent here; from bytes (browser) they must be given here or loading fails clearly.
  std::vector<std::pair<std::string, std::vector<uint8_t>>> external_data;
};

class Model {
 public:
  // Parses and checks a model description (no weights): every field, every value reference, and
  // the HirModule it describes (built at two probe extents, so a param whose shape would depend
  // on the bucket dim is refused). `source` names the text in error messages.
  static Model parse(std::string_view json_text, std::string_view source = "model.json");

  Model(const Model& other);
  Model& operator=(const Model& other);
  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;
  ~Model();

  const std::string& name() const;
  const std::string& bucket_dim() const;  // empty for a model with fully static shapes
  const std::string& description() const;

  // Input names and shapes with the bucket dim set to `extent`.
  std::vector<ModelInput> inputs(uint64_t extent) const;
  std::vector<std::string> output_names() const;
  // The layout of every input and output along the bucket dim, in declaration order.
  std::vector<BucketLayout> input_layouts(uint64_t extent) const;
  std::vector<BucketLayout> output_layouts(uint64_t extent) const;
  InputRole input_role(size_t input) const;
  uint64_t input_vocab(size_t input) const;  // for InputRole::Ids: the smallest vocab it indexes
  // The inputs BucketedCompileCache::run_padded_mixed takes: data[i] is input i (declaration order)
  // holding rows * row_values values when it follows the bucket dim, its whole shape otherwise.
  // The result views the model's names and `data`: keep both alive while it is used. Throws
  // Error(Unsupported) naming an input that follows the bucket dim on an inner axis, and
  // Error(InvalidArgument) when data does not hold one vector per input.
  std::vector<CacheRunInput> cache_inputs(std::span<const std::vector<float>> data) const;
  // run_padded*'s output_inners: each output's row_values, 0 for an output returned unsliced.
  std::vector<size_t> output_inners() const;
  // Reproducible inputs for `rows` rows of the bucket dim, the same bytes on every platform and
  // compiler: ids in [0, vocab), masks of ones, values in [-1, 1] from a seeded SplitMix64 stream
  // per input (seed and input index only).
  std::vector<std::vector<float>> synthetic_inputs(uint64_t rows, uint64_t seed = 1) const;
  // Every param the HirModule creates, in creation order, with its stored dtype.
  const std::vector<ModelParam>& params() const;
  size_t param_count() const;  // total number of values over all params

  // The HirModule at `extent` (1 <= extent <= max_extent()); extent is ignored without a bucket dim.
  HirModule build_module(uint64_t extent) const;
  // The module and its weights: exactly what BucketedCompileCache::ensure_hir_with_params takes.
  // Throws Error(ParamNotSet) when the model has no weights yet.
  std::pair<HirModule, ParamMap> build(uint64_t extent) const;
  static constexpr uint64_t max_extent() { return (uint64_t{1} << 31) - 1; }

  bool has_weights() const;
  const ParamMap& weights() const;  // empty without weights
  // Attaches weights: exactly the model's params, each with its shape and size. Throws
  // UnknownName (a tensor the model does not create), MissingInput (a param without a tensor) or
  // ShapeMismatch, naming the tensor and both shapes; the model is unchanged on error.
  // `stored` records the format the values came from (they are f32 in memory either way).
  void set_weights(ParamMap weights, TensorDType stored = TensorDType::F32);

  // The canonical JSON text of the description; "weights" names `weights_file` when non-empty.
  std::string to_json(std::string_view weights_file = {}) const;

  struct Impl;

 private:
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  friend Model load_model(const std::string&);
  friend Model load_model(const std::string&, const LoadOptions&);
  friend Model load_model_from_bytes(std::string_view, std::span<const uint8_t>, std::string_view);
  friend Model load_model_from_onnx_bytes(std::span<const uint8_t>, const LoadOptions&, std::string_view);
  friend Model load_model_from_tfjs(std::string_view, std::span<const std::vector<uint8_t>>, std::string_view);
};

// Reads `path` (the JSON description) and the weights file it names, resolved relative to the
// JSON file's folder. Throws Error(ParseError) naming the file at fault. A path ending in ".onnx"
// is read as load_model(path, LoadOptions{}).
Model load_model(const std::string& path);
// ".onnx" (any case): an ONNX file, with `options`; else a JSON description (options must then be
// empty). Throws Error(ParseError) for a malformed file, Error(Unsupported) for an op, opset or
// type rungs does not support, naming the node, and Error(InvalidArgument) for options that do not
// fit the file (an unknown symbol, an ambiguous bucket dim: the message lists the symbols).
Model load_model(const std::string& path, const LoadOptions& options);
// An ONNX file from memory. External data must be in options.external_data. `name` prefixes
// error messages.
Model load_model_from_onnx_bytes(std::span<const uint8_t> onnx, const LoadOptions& options = {},
                                 std::string_view name = "model");
// A TF.js graph model from memory (docs/tfjs.md): model.json's text and its weight shards in the
// order its weightsManifest lists them. load_model(path) reads a model.json with a
// modelTopology (and the shards beside it) the same way. `name` prefixes error messages.
Model load_model_from_tfjs(std::string_view model_json, std::span<const std::vector<uint8_t>> shards,
                           std::string_view name = "model");
// The same from memory (browsers have no files): the description's "weights" field is ignored
// and `safetensors` is used instead. `name` prefixes error messages (e.g. "encoder").
Model load_model_from_bytes(std::string_view json_text, std::span<const uint8_t> safetensors,
                            std::string_view name = "model");

// Writes `json_path` and the weights beside it (same stem, ".safetensors"), every tensor stored
// as `dtype`. Throws Error(ParamNotSet) for a model without weights, Error(InvalidArgument) when a
// file cannot be written.
void save_model(const Model& model, const std::string& json_path, TensorDType dtype = TensorDType::F32);
// The weights as safetensors bytes (what save_model writes), every tensor stored as `dtype`.
std::vector<uint8_t> model_weights_bytes(const Model& model, TensorDType dtype = TensorDType::F32);

}  // namespace rungs
