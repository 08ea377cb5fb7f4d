// SPDX-License-Identifier: Apache-2.0
// core/import/tfjs/tfjs_weights.hpp: a TF.js graph model's weights, from the shards its
// weightsManifest names (docs/tfjs.md).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/import/onnx/onnx_graph.hpp"
#include "core/model/frontend.hpp"

namespace rungs::tfjs_import {

// The weights the manifest lists, in order, from each group's shards laid end to end (shard i of
// the whole manifest read by read_shard(i, path)). Every weight is in the result with its kind
// and shape; int32 and bool values, and a float32 of at most one value, in Tensor::v; a float32
// of more values only in *floats (a param's data, never folded as a constant). float32, int32 and
// bool are read; a quantized weight, another dtype, shards shorter or longer than the weights
// are errors that name `source` and the weight.
std::map<std::string, onnx_import::Tensor> read_weights(const nlohmann::json& manifest, const model::ShardReader& read_shard,
                                                        const std::string& source,
                                                        std::map<std::string, std::vector<float>>* floats);

}  // namespace rungs::tfjs_import
