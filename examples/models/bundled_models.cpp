// SPDX-License-Identifier: Apache-2.0
// examples/models/bundled_models.cpp: deterministic descriptions and weights of the bundled models.
#include "examples/models/bundled_models.hpp"

#include <cmath>
#include <string_view>

#include "core/numeric/splitmix64.hpp"
#include "rungs/error.hpp"
#include "rungs/ladder.hpp"

namespace rungs::examples {
namespace {

constexpr uint64_t kWeightSeed = 0x72756e6773ull;  // "rungs"
constexpr int kEncoderLayers = 2;

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Values for one param, seeded by its name alone: the classifier's encoder params equal the
// encoder's. Scales (uniform, so variance = bound^2 / 3):
//   linear weight [in, out]   variance 1/in (LeCun), halved in std for the residual branch outputs
//                             (attention o, mlp down: 1/sqrt(2 * layers)) so the stream stays O(1)
//   bias                      +-0.02;   layer norm gamma 1 +- 1/8, beta +-0.05 (not the identity,
//                             so a swapped gamma/beta shows up in tests)
//   embedding table           +-1 (the first layer norm rescales it)
std::vector<float> init_param(const ModelParam& p) {
  numeric::SplitMix64 rng{kWeightSeed ^ fnv1a(p.name)};
  const auto n = static_cast<size_t>(shape_numel(p.shape));
  double center = 0.0, bound = 0.0;
  if (ends_with(p.name, ".weight") && p.shape.size() == 2) {
    bound = std::sqrt(3.0 / static_cast<double>(p.shape[0]));
    if (ends_with(p.name, ".o.weight") || ends_with(p.name, ".down.weight")) {
      bound *= 1.0 / std::sqrt(2.0 * kEncoderLayers);
    }
  } else if (ends_with(p.name, ".bias")) {
    bound = 0.02;
  } else if (ends_with(p.name, ".gamma")) {
    center = 1.0;
    bound = 0.125;  // a power of two: offset is exact, so center + offset rounds once, fma or not
  } else if (ends_with(p.name, ".beta")) {
    bound = 0.05;
  } else if (ends_with(p.name, ".table")) {
    bound = 1.0;
  } else {
    throw Error(ErrorCode::Internal, "make_models: no init rule for param '" + p.name + "' " + shape_to_string(p.shape));
  }
  std::vector<float> v(n);
  for (float& x : v) {
    const double offset = rng.symmetric() * bound;  // its own statement: never contracted into an fma
    x = static_cast<float>(center + offset);
  }
  return v;
}

Model with_weights(Model m) {
  ParamMap w;
  for (const ModelParam& p : m.params()) w[p.name] = init_param(p);
  m.set_weights(std::move(w));
  return m;
}

std::string mlp_description() {
  return R"({
  "format": "rungs-model", "version": 1, "name": "mlp",
  "description": "rows x 64 -> 256 (GELU) -> 64; every row is independent",
  "bucket_dim": "rows",
  "inputs": [{"name": "x", "shape": ["rows", 64]}],
  "blocks": [
    {"op": "linear", "name": "fc1", "input": "x", "out_features": 256, "activation": "gelu", "out": "h"},
    {"op": "linear", "name": "fc2", "input": "h", "out_features": 64, "out": "y"}
  ],
  "outputs": [{"name": "y"}]
})";
}

// The encoder's blocks, shared by the classifier. `pooled` is the value name of the embedding.
std::string encoder_blocks() {
  std::string s = R"(
    {"op": "embedding", "name": "tok", "input": "ids", "vocab": 1000, "dim": 128, "out": "h0"})";
  for (int l = 0; l < kEncoderLayers; ++l) {
    const std::string p = "l" + std::to_string(l);
    const std::string in = "h" + std::to_string(l), out = "h" + std::to_string(l + 1);
    s += ",\n    {\"op\": \"layer_norm\", \"name\": \"" + p + ".ln1\", \"input\": \"" + in + "\", \"out\": \"" + p + ".x1\"}";
    s += ",\n    {\"op\": \"self_attention\", \"name\": \"" + p + ".attn\", \"input\": \"" + p +
         ".x1\", \"heads\": 4, \"mask\": \"mask\", \"out\": \"" + p + ".att\"}";
    s += ",\n    {\"op\": \"add\", \"inputs\": [\"" + in + "\", \"" + p + ".att\"], \"out\": \"" + p + ".h\"}";
    s += ",\n    {\"op\": \"layer_norm\", \"name\": \"" + p + ".ln2\", \"input\": \"" + p + ".h\", \"out\": \"" + p + ".x2\"}";
    s += ",\n    {\"op\": \"mlp\", \"name\": \"" + p + ".mlp\", \"input\": \"" + p +
         ".x2\", \"hidden\": 512, \"activation\": \"gelu\", \"out\": \"" + p + ".ff\"}";
    s += ",\n    {\"op\": \"add\", \"inputs\": [\"" + p + ".h\", \"" + p + ".ff\"], \"out\": \"" + out + "\"}";
  }
  s += ",\n    {\"op\": \"layer_norm\", \"name\": \"final_ln\", \"input\": \"h" + std::to_string(kEncoderLayers) +
       "\", \"out\": \"hn\"}";
  s += ",\n    {\"op\": \"mean_pool\", \"input\": \"hn\", \"mask\": \"mask\", \"out\": \"pooled\"}";
  return s;
}

std::string encoder_description(bool classifier) {
  std::string s = R"({
  "format": "rungs-model", "version": 1,
  "bucket_dim": "seq",
  "inputs": [{"name": "ids", "shape": [1, "seq"]}, {"name": "mask", "shape": [1, "seq"]}],
)";
  if (classifier) {
    s += R"(  "name": "classifier",
  "description": "the encoder (same weights) plus a linear head to 8 classes",
  "blocks": [)" + encoder_blocks() + R"(,
    {"op": "linear", "name": "head", "input": "pooled", "out_features": 8, "out": "logits"}
  ],
  "outputs": [{"name": "logits"}]
})";
  } else {
    s += R"(  "name": "encoder",
  "description": "2-layer pre-norm transformer encoder, d=128, 4 heads, mlp 512 GELU, mean pooling over the padding mask",
  "blocks": [)" + encoder_blocks() + R"(
  ],
  "outputs": [{"name": "embedding", "value": "pooled"}]
})";
  }
  return s;
}

void add_model(std::vector<BundledFile>& files, const Model& m, TensorDType dtype) {
  const std::string base = m.name();
  const std::string text = m.to_json(base + ".safetensors");
  files.push_back({"models/" + base + ".json", std::vector<uint8_t>(text.begin(), text.end())});
  files.push_back({"models/" + base + ".safetensors", model_weights_bytes(m, dtype)});
}

}  // namespace

Model make_mlp() { return with_weights(Model::parse(mlp_description(), "mlp.json")); }
Model make_encoder() { return with_weights(Model::parse(encoder_description(false), "encoder.json")); }
Model make_classifier() { return with_weights(Model::parse(encoder_description(true), "classifier.json")); }

std::vector<uint32_t> make_chat_trace(size_t count, uint64_t seed) {
  // The project's one log-normal generator, so `rungs trace lognormal --median 24 --count 2000
  // --max 256 --seed 2000 --sigma 0.8` writes the same lengths. sigma 0.8: p99 near 150.
  std::vector<uint32_t> out;
  for (uint64_t n : ladder::lognormal_trace(24.0, count, 256, seed, 0.8)) out.push_back(static_cast<uint32_t>(n));
  return out;
}

std::vector<BundledFile> make_bundled_files() {
  std::vector<BundledFile> files;
  add_model(files, make_mlp(), TensorDType::F32);           // 33k params: 132 KB in f32
  add_model(files, make_encoder(), TensorDType::BF16);      // 525k params: 1 MB in bf16 (2 MB in f32)
  add_model(files, make_classifier(), TensorDType::BF16);
  std::string trace;
  for (uint32_t n : make_chat_trace(2000, 2000)) trace += std::to_string(n) + "\n";
  files.push_back({"traces/chat-lognormal-2000.txt", std::vector<uint8_t>(trace.begin(), trace.end())});
  return files;
}

}  // namespace rungs::examples
