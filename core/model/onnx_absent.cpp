// SPDX-License-Identifier: Apache-2.0
// core/model/onnx_absent.cpp: load_onnx in a build without the ONNX frontend (RUNGS_ONNX=OFF).
#include "core/check.hpp"
#include "core/model/frontend.hpp"

namespace rungs::model {

LoadedFrontend load_onnx(std::span<const uint8_t>, const LoadOptions&, const std::string& source, const std::string&) {
  fail(ErrorCode::Unsupported, source + ": this build of rungs has no ONNX frontend (configured with "
                                        "RUNGS_ONNX=OFF); see docs/onnx.md");
}

}  // namespace rungs::model
