// SPDX-License-Identifier: Apache-2.0
// core/model/tfjs_absent.cpp: the TF.js frontend in a build without the ONNX frontend it builds on
// (RUNGS_ONNX=OFF): model.json files are still recognised, and refused clearly.
#include "core/check.hpp"
#include "core/model/frontend.hpp"
#include "core/model/json_util.hpp"

namespace rungs::model {

bool is_tfjs_model(std::string_view json_text) {
  if (json_text.find("\"modelTopology\"") == std::string_view::npos) return false;
  try {
    const nlohmann::json j = nlohmann::json::parse(json_text);
    return j.is_object() && j.contains("modelTopology") && j.contains("weightsManifest");
  } catch (const std::exception&) {
    return false;
  }
}

LoadedFrontend load_tfjs(std::string_view, const ShardReader&, const LoadOptions&, const std::string& source) {
  fail(ErrorCode::Unsupported, source + ": this build of rungs has no TF.js frontend (it reuses the ONNX "
                                        "frontend, configured off with RUNGS_ONNX=OFF); see docs/tfjs.md");
}

}  // namespace rungs::model
