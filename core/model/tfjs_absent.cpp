// SPDX-License-Identifier: Apache-2.0
// core/model/tfjs_absent.cpp: the TF.js frontend in a build without the ONNX frontend it builds on
// (RUNGS_ONNX=OFF): model.json files are still recognised, and refused clearly.
#include "core/check.hpp"
#include "core/model/frontend.hpp"
#include "core/model/json_util.hpp"

namespace rungs::model {

LoadedFrontend load_tfjs(std::string_view, const ShardReader&, const LoadOptions&, const std::string& source) {
  fail(ErrorCode::Unsupported, source +
                                   ": this build of rungs has no TF.js frontend (it reuses the ONNX "
                                   "frontend, configured off with RUNGS_ONNX=OFF); see docs/tfjs.md");
}

}  // namespace rungs::model
