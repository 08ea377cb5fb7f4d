// SPDX-License-Identifier: Apache-2.0
// core/model/model_spec.hpp: the parsed form of a model description (docs/model-format.md).
//
// parse_spec checks everything that can be checked on the text alone (fields, kinds, ranges,
// names, value references); Model::parse then builds the HirModule to check shapes and params.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rungs/types.hpp"

namespace rungs::model {

constexpr int kFormatVersion = 1;
constexpr int64_t kMaxSize = (int64_t{1} << 31) - 1;  // any dim, width, vocab or hidden size
constexpr int kMaxRank = 8;
constexpr size_t kMaxNameLength = 200;

struct Dim {
  int64_t size = 0;     // when !bucket
  bool bucket = false;  // the model's bucket dim
};

struct InputSpec {
  std::string name;
  std::vector<Dim> shape;
};

enum class BlockOp { Linear, LayerNorm, RmsNorm, SelfAttention, Mlp, Embedding, MeanPool, Add };

struct BlockSpec {
  BlockOp op = BlockOp::Linear;
  std::string name;                 // param prefix; empty for mean_pool and add
  std::vector<std::string> inputs;  // "input" (one), or add's two "inputs"
  std::optional<std::string> mask;  // self_attention, mean_pool
  std::string out;
  int64_t size = 0;  // linear out_features, mlp hidden, embedding dim
  int64_t vocab = 0;
  int heads = 0;
  Activation act = Activation::None;
  bool bias = true;
  bool causal = false;
  double eps = 0;
};

struct OutputSpec {
  std::string name;
  std::string value;
};

struct ModelSpec {
  std::string name;
  std::string description;
  std::string bucket_dim;  // empty: no bucket dim
  std::vector<InputSpec> inputs;
  std::vector<BlockSpec> blocks;
  std::vector<OutputSpec> outputs;
  std::string weights;  // as written, relative to the description's folder; empty if absent
};

std::string_view op_name(BlockOp op);           // "linear", "layer_norm", ...
std::string_view activation_name(Activation a);  // "none", "relu", "gelu", ...
std::string block_label(const ModelSpec& spec, size_t index);  // "blocks[3] (self_attention 'l0.attn')"

// Throws Error(ParseError) "<source>: <field path>: <what was expected>, got <what was found>".
ModelSpec parse_spec(std::string_view text, std::string_view source);
// Canonical JSON: every field written, defaults included, one input/block/output a line.
std::string spec_to_json(const ModelSpec& spec, std::string_view weights_file);

}  // namespace rungs::model
