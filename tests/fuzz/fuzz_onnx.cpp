// SPDX-License-Identifier: Apache-2.0
// tests/fuzz/fuzz_onnx.cpp: rungs::load_model_from_onnx_bytes (the ONNX frontend, docs/onnx.md)
// on any bytes.
//
// The bytes are the whole .onnx file, loaded with the default options (the bucket dim is the only
// symbol left once a batch-like one is fixed to 1). The seed corpus (tests/fuzz/make_seeds.py,
// onnx_seeds) holds small valid models, so mutations stay near-valid and reach the frontend's
// shape folding and op mapping rather than only the protobuf parser. A model that loads must
// survive what a user does next: at small extents its inputs are listed, it builds, compiles
// (under an arena limit) and runs on zeros with one output per declared output. rungs::Error is
// the expected outcome for most inputs; anything else (another exception, a sanitizer report, a
// leak) is a bug.
#include <optional>
#include <span>
#include <vector>

#include "fuzz_input.hpp"
#include "run_model.hpp"
#include "rungs/rungs.hpp"

using namespace rungs;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::optional<Model> model;
  try {
    model = load_model_from_onnx_bytes(std::span<const uint8_t>(data, size), LoadOptions{}, "fuzz");
  } catch (const Error&) {
    return 0;  // refused with a message: the expected outcome for most inputs
  }
  try {
    rungs::fuzz::run_model_once(*model, 1);
    if (!model->bucket_dim().empty()) rungs::fuzz::run_model_once(*model, 3);
  } catch (const Error&) {
    // refused (arena limit, a shape that does not fold at this extent): fine
  }
  return 0;
}
