// SPDX-License-Identifier: Apache-2.0
// examples/models/bundled_models.hpp: the generator of the bundled example models and traces.
//
// Everything under examples/models/ and examples/traces/ is made here, deterministically: a
// seeded PRNG per param (so one param's values do not depend on the others), init scales that
// keep activations in range, and only exactly rounded arithmetic (+ - * / sqrt) on the weight
// path, so every compiler and platform writes the same bytes. `rungs_make_models` writes the
// files; tests/model/bundled_models_test.cpp regenerates them and compares byte for byte.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rungs/model.hpp"

namespace rungs::examples {

// rows x 64 -> 256 (GELU) -> 64, bucketed over "rows".
Model make_mlp();
// 2-layer pre-norm transformer encoder: token embedding (1000 ids, d=128), 4 heads, mlp 512 GELU,
// final layer norm, mean pooling with the padding mask -> one 128-d embedding; bucketed over "seq".
Model make_encoder();
// make_encoder() plus a linear head to 8 classes.
Model make_classifier();

// Request lengths, log-normal with median 24 and sigma 0.8, clipped to [1, 256]
// (ladder::lognormal_trace).
std::vector<uint32_t> make_chat_trace(size_t count, uint64_t seed);

struct BundledFile {
  std::string path;  // relative to examples/, e.g. "models/encoder.safetensors"
  std::vector<uint8_t> bytes;
};
// Every bundled file, as rungs_make_models writes it.
std::vector<BundledFile> make_bundled_files();

}  // namespace rungs::examples
