// SPDX-License-Identifier: Apache-2.0
// core/import/tfjs/tfjs_weights.cpp: the weights of a TF.js graph model (tfjs_weights.hpp).
#include "core/import/tfjs/tfjs_weights.hpp"

#include <cstring>

#include "core/check.hpp"

namespace rungs::tfjs_import {

using json = nlohmann::json;
using onnx_import::Kind;
using onnx_import::Tensor;

std::map<std::string, Tensor> read_weights(const json& manifest, const model::ShardReader& read_shard,
                                           const std::string& source, std::map<std::string, std::vector<float>>* floats) {
  std::map<std::string, Tensor> out;
  if (!manifest.is_array()) fail(ErrorCode::ParseError, source + ": weightsManifest must be an array");
  size_t index = 0;
  for (const json& group : manifest) {
    // The group's shards laid end to end, copied into a buffer sized once (not grown by
    // vector::insert, which copies what it holds at every growth).
    std::vector<std::vector<uint8_t>> shards;
    size_t total = 0;
    for (const json& p : group.value("paths", json::array())) {
      if (!p.is_string()) fail(ErrorCode::ParseError, source + ": weightsManifest: a path must be a string");
      shards.push_back(read_shard(index++, p.get<std::string>()));
      total += shards.back().size();
    }
    std::vector<uint8_t> bytes;
    if (shards.size() == 1) {
      bytes = std::move(shards[0]);
    } else {
      bytes.resize(total);
      size_t at = 0;
      for (std::vector<uint8_t>& b : shards) {
        if (!b.empty()) std::memcpy(bytes.data() + at, b.data(), b.size());
        at += b.size();
      }
    }
    size_t at = 0;
    for (const json& w : group.value("weights", json::array())) {
      const std::string name = w.value("name", "");
      const std::string dtype = w.value("dtype", "float32");
      if (w.contains("quantization")) {
        fail(ErrorCode::Unsupported, source + ": weight '" + name + "' is quantized; quantized TF.js weights are not supported");
      }
      Shape shape;
      for (const json& d : w.value("shape", json::array())) shape.push_back(d.get<int64_t>());
      onnx_import::check_shape(shape, source + ": weight '" + name + "'");
      const auto count = static_cast<size_t>(shape_numel(shape));
      const size_t width = dtype == "bool" ? 1 : 4;
      if (dtype != "float32" && dtype != "int32" && dtype != "bool") {
        fail(ErrorCode::Unsupported, source + ": weight '" + name + "' has dtype " + dtype + " (float32, int32 and bool are supported)");
      }
      if (bytes.size() - at < count * width || at > bytes.size()) {
        fail(ErrorCode::ParseError, source + ": the shards end before weight '" + name + "' (" + std::to_string(bytes.size()) + " bytes)");
      }
      Tensor t{dtype == "float32" ? Kind::Float : dtype == "int32" ? Kind::Int
                                                                   : Kind::Bool,
               shape,
               {}};
      std::vector<float> f;
      if (dtype == "float32") {
        f.resize(count);
        std::memcpy(f.data(), bytes.data() + at, count * 4);
        if (count <= 1) t.v.assign(f.begin(), f.end());
      } else {
        for (size_t i = 0; i < count; ++i) {
          if (width == 1) {
            t.v.push_back(bytes[at + i] != 0 ? 1 : 0);
          } else {
            int32_t x;
            std::memcpy(&x, bytes.data() + at + 4 * i, 4);
            t.v.push_back(x);
          }
        }
      }
      at += count * width;
      if (dtype == "float32" && count > 1) (*floats)[name] = std::move(f);
      out[name] = std::move(t);
    }
    if (at != bytes.size()) {
      fail(ErrorCode::ParseError, source + ": the shards hold " + std::to_string(bytes.size()) + " bytes, the manifest's weights " + std::to_string(at));
    }
  }
  return out;
}

}  // namespace rungs::tfjs_import
