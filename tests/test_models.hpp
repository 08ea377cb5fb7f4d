// SPDX-License-Identifier: Apache-2.0
// tests/test_models.hpp: small models built in code for the compiler and cache tests.
#pragma once

#include <cmath>
#include <string>

#include "rungs/rungs.hpp"
#include "test_util.hpp"

namespace rungs::testing {

struct EncoderConfig {
  int64_t vocab = 50;
  int64_t dim = 32;
  int heads = 4;
  int64_t hidden = 64;
  int layers = 2;
};

// A pre-norm transformer encoder over ids [1, seq] with a padding mask [1, seq], mean-pooled with
// the mask into one [1, dim] embedding (output "embedding"), also returning the per-token states
// (output "tokens").
inline HirModule make_encoder(int64_t seq, const EncoderConfig& c = {}) {
  HirModule m;
  Value ids = m.input("ids", {1, seq});
  Value mask = m.input("mask", {1, seq});
  Value h = m.embedding(ids, "tok", c.vocab, c.dim);
  for (int l = 0; l < c.layers; ++l) {
    std::string p = "layer" + std::to_string(l);
    Value a = m.self_attention(m.layer_norm(h, p + ".ln1"), p + ".attn", c.heads, mask);
    h = m.add(h, a);
    Value f = m.mlp(m.layer_norm(h, p + ".ln2"), p + ".mlp", c.hidden);
    h = m.add(h, f);
  }
  h = m.layer_norm(h, "final_ln");
  m.output("tokens", h);
  m.output("embedding", m.mean_pool(h, mask));
  return m;
}

// Deterministic params for every param of `m`: gains near 1, small weights.
inline ParamMap random_params(const HirModule& m, uint32_t seed) {
  ParamMap params;
  for (const auto& [name, shape] : m.params()) {
    int64_t n = 1;
    for (auto d : shape) n *= d;
    bool gain = name.size() > 6 && name.compare(name.size() - 6, 6, ".gamma") == 0;
    float scale = shape.size() == 2 ? 1.f / std::sqrt(static_cast<float>(shape[0])) : 0.1f;
    auto v = random_vector(static_cast<size_t>(n), seed++, -scale, scale);
    if (gain)
      for (float& x : v) x += 1.f;
    params[name] = v;
  }
  return params;
}

// ids and mask for `real` tokens padded to `extent` (ids 0 and mask 0 in the padding).
inline std::pair<std::vector<float>, std::vector<float>> encoder_inputs(int64_t real, int64_t extent, int64_t vocab,
                                                                        uint32_t seed) {
  std::vector<float> ids(extent, 0.f), mask(extent, 0.f);
  for (int64_t i = 0; i < real; ++i) {
    ids[i] = static_cast<float>((seed * 7919u + static_cast<uint32_t>(i) * 104729u) % vocab);
    mask[i] = 1.f;
  }
  return {ids, mask};
}

}  // namespace rungs::testing
