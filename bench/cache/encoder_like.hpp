// bench/cache/encoder_like.hpp: an encoder-like HirModule for the cache benchmark, built
// in code until the bundled `encoder` model lands: a pre-norm transformer encoder over token ids,
// with a padding mask and masked mean pooling.
//
//   ids [1, S], mask [1, S] -> embedding -> layers x (x + attn(ln(x), mask); x + mlp(ln(x)))
//   -> ln_f -> outputs "pooled" [1, d] (mean over kept rows) and "hidden" [1, S, d]
//
// Params do not depend on S, so every bucket of a ladder uploads the same weights (same name,
// shape and data): encoder_params() derives each value from the param's name and a seed only.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "rungs/hir.hpp"
#include "rungs/types.hpp"

namespace rungs::bench {

struct EncoderConfig {
  int64_t d = 128;
  int heads = 4;
  int64_t vocab = 1000;
  int64_t hidden = 512;
  int layers = 2;
};

inline HirModule encoder_like(uint64_t seq, const EncoderConfig& c = {}) {
  HirModule m;
  const int64_t s = static_cast<int64_t>(seq);
  Value ids = m.input("ids", {1, s});
  Value mask = m.input("mask", {1, s});
  Value x = m.embedding(ids, "emb", c.vocab, c.d);
  for (int l = 0; l < c.layers; ++l) {
    const std::string p = "l" + std::to_string(l);
    x = m.add(x, m.self_attention(m.layer_norm(x, p + ".ln1"), p + ".attn", c.heads, mask));
    x = m.add(x, m.mlp(m.layer_norm(x, p + ".ln2"), p + ".mlp", c.hidden));
  }
  x = m.layer_norm(x, "ln_f");
  m.output("pooled", m.mean_pool(x, mask));
  m.output("hidden", x);
  return m;
}

// Deterministic values from the param's name and the seed (FNV-1a, then xorshift).
inline ParamMap encoder_params(const HirModule& m, uint64_t seed = 1) {
  ParamMap out;
  for (const auto& [name, shape] : m.params()) {
    uint64_t h = 1469598103934665603ull ^ seed;
    for (char ch : name) h = (h ^ static_cast<unsigned char>(ch)) * 1099511628211ull;
    const int64_t n = shape_numel(shape);
    const bool gain = name.size() >= 5 && name.compare(name.size() - 5, 5, "gamma") == 0;
    const float scale = shape.size() == 2 && name.find("table") == std::string::npos
                            ? 1.0f / std::sqrt(static_cast<float>(shape[0]))
                            : (shape.size() == 2 ? 1.0f : 0.1f);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& f : v) {
      h ^= h << 13;
      h ^= h >> 7;
      h ^= h << 17;
      const float u = static_cast<float>(h >> 40) / static_cast<float>(1ull << 24) * 2.0f - 1.0f;  // [-1, 1)
      f = (gain ? 1.0f : 0.0f) + scale * u;
    }
    out.emplace(name, std::move(v));
  }
  return out;
}

inline std::pair<HirModule, ParamMap> encoder_with_params(uint64_t seq, const EncoderConfig& c = {}) {
  HirModule m = encoder_like(seq, c);
  ParamMap p = encoder_params(m);
  return {std::move(m), std::move(p)};
}

// Token ids (as floats, in [1, vocab)) and an all-ones mask for a request of `len` tokens.
inline std::vector<float> request_ids(uint64_t len, uint64_t salt, int64_t vocab = 1000) {
  std::vector<float> ids(len);
  for (uint64_t i = 0; i < len; ++i)
    ids[i] = static_cast<float>(1 + (i * 7919 + salt * 104729) % static_cast<uint64_t>(vocab - 1));
  return ids;
}

}  // namespace rungs::bench
