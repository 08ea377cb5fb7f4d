// SPDX-License-Identifier: Apache-2.0
// tests/fuzz/fuzz_graph_json.cpp: rungs::Graph::from_json on any text.
//
// A graph that parses must round-trip (to_json, from_json, to_json gives the same text) and, when
// small, compile under an arena limit and run on zeros on both devices.
#include "fuzz_input.hpp"
#include "rungs/rungs.hpp"

namespace {

using namespace rungs;
using rungs::fuzz::fuzz_check;

constexpr int64_t kMaxValues = int64_t{1} << 18;

void run_on(const Graph& g, Device device) {
  CompileOptions options;
  options.threads = 1;
  options.max_arena_bytes = size_t{1} << 24;
  CompiledGraph c = Session(device).compile(g, options);
  for (const std::string& name : c.param_names()) {
    const int64_t n = shape_numel(c.param_shape(name));
    if (n > kMaxValues) return;
    c.set_param(name, std::vector<float>(static_cast<size_t>(n), 0.5f));
  }
  std::vector<std::vector<float>> data;
  for (const std::string& name : c.input_names()) {
    const int64_t n = shape_numel(c.input_shape(name));
    if (n > kMaxValues) return;
    data.emplace_back(static_cast<size_t>(n), 0.f);
  }
  std::vector<NamedInput> named;
  for (size_t i = 0; i < data.size(); ++i) named.push_back({c.input_names()[i], data[i]});
  const auto out = c.run(named);
  fuzz_check(out.size() == c.output_names().size(), "run: one output per declared output");
  for (size_t i = 0; i < out.size(); ++i)
    fuzz_check(static_cast<int64_t>(out[i].size()) == shape_numel(c.output_shape(c.output_names()[i])),
               "run: an output's size is not its shape's");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::optional<Graph> g;
  try {
    g = Graph::from_json(text);
  } catch (const Error&) {
    return 0;
  }
  std::string once;
  try {
    once = g->to_json();
    fuzz_check(Graph::from_json(once).to_json() == once, "to_json -> from_json -> to_json changed the text");
  } catch (const Error& e) {
    rungs::fuzz::fuzz_fail(std::string("a parsed graph does not round-trip: ") + e.what());
  }
  for (Device device : {Device::Cpu, Device::Reference}) {
    try {
      run_on(*g, device);
    } catch (const Error&) {
    }
  }
  return 0;
}
