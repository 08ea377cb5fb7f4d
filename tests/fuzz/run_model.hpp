// SPDX-License-Identifier: Apache-2.0
// tests/fuzz/run_model.hpp: what the model fuzzers (fuzz_model_loader, fuzz_onnx) do with a model
// that loaded: what a user does next, at a small extent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz_input.hpp"
#include "rungs/rungs.hpp"

namespace rungs::fuzz {

constexpr size_t kMaxModelValues = size_t{1} << 18;  // skip compiling models bigger than this

// Lists the inputs at `extent`, builds, compiles (under an arena limit) and runs on zeros: one
// output per declared output. Throws rungs::Error as the library does.
inline void run_model_once(const Model& model, uint64_t extent) {
  if (model.param_count() > kMaxModelValues) return;
  const std::vector<ModelInput> inputs = model.inputs(extent);  // NamedInput below views its names
  size_t input_values = 0;
  for (const ModelInput& in : inputs) input_values += static_cast<size_t>(shape_numel(in.shape));
  if (input_values > kMaxModelValues) return;

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

}  // namespace rungs::fuzz
