// SPDX-License-Identifier: Apache-2.0
// Universal Sentence Encoder Lite's reference embeddings, as @energetic-ai/embeddings (TF.js)
// computes them: one JSON object {"text", "ids", "embedding"} a line, made at build time by
// tests/text/reference/use_embeddings.mjs. Read by the TF.js frontend's and TextEmbedder's tests.
#pragma once

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace rungs::testing {

struct UseReference {
  std::string text;
  std::vector<int32_t> ids;
  std::vector<float> embedding;
};

// Empty when the file is missing (the tests skip).
inline std::vector<UseReference> read_use_reference(const std::string& path) {
  std::vector<UseReference> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const nlohmann::json j = nlohmann::json::parse(line);
    out.push_back({j.at("text").get<std::string>(), j.at("ids").get<std::vector<int32_t>>(),
                   j.at("embedding").get<std::vector<float>>()});
  }
  return out;
}

}  // namespace rungs::testing
