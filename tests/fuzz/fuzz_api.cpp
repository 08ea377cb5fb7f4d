// SPDX-License-Identifier: Apache-2.0
// tests/fuzz/fuzz_api.cpp: the API driver. Fuzz bytes become either
//   - a random small Graph (random_graph.hpp), compiled on Device::Cpu and Device::Reference with
//     random options, run on the same inputs; outputs must agree within the documented tolerance
//     (tests/numerics.hpp), and with NaN / Inf inputs the Cpu run must be deterministic; or
//   - a BucketedCompileCache session (cache_session.hpp): random ladders, keys, row counts and
//     calls, on a Cpu cache and a Reference cache side by side.
// rungs::Error is an expected outcome; any other exception, a crash or a sanitizer report is a bug,
// and so is a disagreement (fuzz_fail aborts so the fuzzer keeps the input).
#include <cstring>
#include <optional>

#include "cache_session.hpp"
#include "fuzz_input.hpp"
#include "numerics.hpp"
#include "random_graph.hpp"

namespace {

using namespace rungs;
using rungs::fuzz::fuzz_check;
using rungs::fuzz::fuzz_fail;

bool same_bits(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].size() != b[i].size() || std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(float)) != 0)
      return false;
  return true;
}

// Compiles and runs; an Error (either at compile or run) comes back as its code.
struct Outcome {
  std::optional<ErrorCode> error;
  std::string message;
  std::vector<std::vector<float>> outputs;
};

Outcome compile_and_run(const fuzz::RandomCase& c, Device device, const CompileOptions& options, int runs,
                        std::vector<std::vector<float>>* second = nullptr) {
  Outcome o;
  try {
    CompiledGraph compiled = Session(device).compile(c.graph, options);
    for (const auto& [name, data] : c.params) compiled.set_param(name, data);
    std::vector<NamedInput> named;
    for (const auto& [name, data] : c.inputs) named.push_back({name, data});
    o.outputs = compiled.run(named);
    if (runs > 1 && second) *second = compiled.run(named);
  } catch (const Error& e) {
    o.error = e.code();
    o.message = e.what();
  }
  return o;
}

// `perturbed`: the same bytes as `in`, not read yet (see ill_conditioned below).
void graph_case(fuzz::FuzzInput& in, fuzz::FuzzInput perturbed) {
  fuzz::RandomCase c = fuzz::random_case(in);
  CompileOptions options;
  options.threads = 1;
  options.fusion = in.flag();
  options.max_arena_bytes = size_t{1} << 24;
  std::vector<std::vector<float>> again;
  const Outcome cpu = compile_and_run(c, Device::Cpu, options, 2, &again);
  const Outcome ref = compile_and_run(c, Device::Reference, options, 1);
  const std::string graph = "\ngraph:\n" + c.graph.to_text();
  fuzz_check(cpu.error == ref.error, "cpu and reference disagree on the error: '" + cpu.message + "' vs '" +
                                         ref.message + "'" + graph);
  if (cpu.error) return;
  fuzz_check(same_bits(cpu.outputs, again), "two runs of one compiled graph differ" + graph);
  if (c.special) return;  // NaN / Inf inputs: deterministic, not held to a tolerance
  fuzz_check(cpu.outputs.size() == ref.outputs.size(), "output count differs" + graph);
  std::vector<Outcome> ref_nudged;  // one per fuzz::kNudges, computed once, only when an output disagrees
  for (size_t i = 0; i < cpu.outputs.size(); ++i) {
    const testing::Agreement a = testing::cpu_agrees(cpu.outputs[i], ref.outputs[i]);
    if (a.ok) continue;
    // Is the graph ill-conditioned? The same graph with an 8-ulp relative error injected after
    // every op (and into every param), as rounding does, on the reference: if that moves its
    // output by more than half the tolerance, rounding alone moves it that far, and no float
    // implementation can be held to the tolerance (docs/numerics.md, "Ill-conditioned graphs").
    if (ref_nudged.empty()) {
      for (fuzz::Nudge how : fuzz::kNudges) {
        fuzz::FuzzInput bytes = perturbed;
        fuzz::RandomCase p = fuzz::random_case(bytes, true, how);
        size_t phase = 0;
        for (auto& [name, data] : p.params) data = fuzz::nudged(std::move(data), phase++, how);
        ref_nudged.push_back(compile_and_run(p, Device::Reference, options, 1));
      }
    }
    bool ill_conditioned = false;
    for (const Outcome& n : ref_nudged)
      ill_conditioned = ill_conditioned || n.error || !testing::cpu_agrees(n.outputs[i], ref.outputs[i], testing::kCpuTolerance / 2).ok;
    if (!ill_conditioned)
      fuzz_fail("output " + std::to_string(i) + " (fusion " + (options.fusion ? "on" : "off") +
                "): cpu and reference differ beyond the tolerance at " + a.where + graph);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::FuzzInput in(data, size);
  if (in.below(4) == 0) {
    fuzz::cache_session(in);
  } else {
    fuzz::FuzzInput again(data, size);
    again.below(4);
    graph_case(in, again);
  }
  return 0;
}
