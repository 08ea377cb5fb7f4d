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
#include "rungs/rungs.hpp"

namespace {

using namespace rungs;
using rungs::fuzz::fuzz_check;

constexpr size_t kMaxValues = size_t{1} << 18;  // skip compiling models bigger than this

void run_once(const Model& model, uint64_t extent) {
  if (model.param_count() > kMaxValues) return;
  const std::vector<ModelInput> inputs = model.inputs(extent);  // NamedInput below views its names
  size_t input_values = 0;
  for (const ModelInput& in : inputs) input_values += static_cast<size_t>(shape_numel(in.shape));
  if (input_values > kMaxValues) return;

  CompileOptions options;
  options.threads = 1;
  options.max_arena_bytes = size_t{1} << 24;
  auto [module, params] = model.build(extent);
  CompiledGraph graph = Session(Device::Cpu).compile_hir(module, options);
  for (const auto& [name, data] : params) graph.set_param(name, data);
  std::vector<std::vector<float>> data;
  std::vector<NamedInput> named;
  for (const ModelInput& in : inputs) data.emplace_back(static_cast<size_t>(shape_numel(in.shape)), 0.f);
  for (size_t i = 0; i < inputs.size(); ++i) named.push_back({inputs[i].name, data[i]});
  const auto out = graph.run(named);
  fuzz_check(out.size() == model.output_names().size(), "run: one output per declared output");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::optional<Model> model;
  try {
    model = load_model_from_onnx_bytes(std::span<const uint8_t>(data, size), LoadOptions{}, "fuzz");
  } catch (const Error&) {
    return 0;  // refused with a message: the expected outcome for most inputs
  }
  try {
    run_once(*model, 1);
    if (!model->bucket_dim().empty()) run_once(*model, 3);
  } catch (const Error&) {
    // refused (arena limit, a shape that does not fold at this extent): fine
  }
  return 0;
}
