// SPDX-License-Identifier: Apache-2.0
// tests/fuzz/fuzz_model_loader.cpp: rungs::load_model_from_bytes on any bytes.
//
// The input is split at its first NUL byte: the model description (JSON) before it, the
// .safetensors bytes after it (no NUL: no weights). A model that loads must survive what a user
// does next: its canonical JSON and its weights written back load again to the same text, and at a
// small extent it compiles (under an arena limit) and runs on zeros.
#include <cstring>

#include "fuzz_input.hpp"
#include "run_model.hpp"
#include "rungs/rungs.hpp"

using namespace rungs;
using rungs::fuzz::fuzz_check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto* nul = static_cast<const uint8_t*>(std::memchr(data, 0, size));
  const size_t json_size = nul ? static_cast<size_t>(nul - data) : size;
  const std::string_view json(reinterpret_cast<const char*>(data), json_size);
  const std::span<const uint8_t> weights = nul ? std::span<const uint8_t>(nul + 1, data + size) : std::span<const uint8_t>();
  std::optional<Model> model;
  try {
    model = load_model_from_bytes(json, weights, "fuzz");
  } catch (const Error&) {
    return 0;  // refused with a message: the expected outcome for most inputs
  }

  // What loads must round-trip: canonical text and weights load again, to the same text.
  const std::string text = model->to_json();
  try {
    const std::vector<uint8_t> bytes = model->params().empty() ? std::vector<uint8_t>() : model_weights_bytes(*model);
    Model again = load_model_from_bytes(text, bytes, "fuzz-again");
    fuzz_check(again.to_json() == text, "the canonical JSON changed on a second load");
    fuzz_check(again.params().size() == model->params().size(), "the params changed on a second load");
  } catch (const Error& e) {
    rungs::fuzz::fuzz_fail(std::string("a loaded model does not load again: ") + e.what() + "\n" + text);
  }

  try {
    rungs::fuzz::run_model_once(*model, 1);
    if (!model->bucket_dim().empty()) rungs::fuzz::run_model_once(*model, 3);
  } catch (const Error&) {
    // refused (arena limit, a shape the compiler does not take): fine
  }
  return 0;
}
