// SPDX-License-Identifier: Apache-2.0
// Builds input -> relu -> output with the installed rungs, compiles it for Device::Cpu, runs it and
// checks every value against max(x, 0). Exit code 0 only if all of that worked.
#include <rungs/rungs.hpp>

#include <cstdio>
#include <vector>

int main() {
  rungs::Graph graph;
  const rungs::Value x = graph.input("x", {2, 9});
  graph.output("y", graph.relu(x));

  rungs::Session session(rungs::Device::Cpu);
  const rungs::CompiledGraph compiled = session.compile(graph);

  std::vector<float> in(18);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i) - 8.5f;
  const rungs::NamedInput inputs[] = {{"x", in}};
  const auto out = compiled.run(inputs);

  if (out.size() != 1 || out[0].size() != in.size()) {
    std::fprintf(stderr, "consumer: expected 1 output of %zu values\n", in.size());
    return 1;
  }
  for (size_t i = 0; i < in.size(); ++i) {
    const float want = in[i] > 0 ? in[i] : 0.0f;
    if (out[0][i] != want) {
      std::fprintf(stderr, "consumer: y[%zu] = %g, expected %g\n", i, out[0][i], want);
      return 1;
    }
  }
  // A wrong-length input must throw rungs::Error, not crash.
  const std::vector<float> short_in(5);
  const rungs::NamedInput bad[] = {{"x", short_in}};
  try {
    (void)compiled.run(bad);
    std::fprintf(stderr, "consumer: a 5-value input for x [2, 9] did not throw\n");
    return 1;
  } catch (const rungs::Error& e) {
    std::printf("consumer: wrong length rejected: %s\n", e.what());
  }
  std::printf("consumer: rungs %.*s, relu on %s ok\n", static_cast<int>(rungs::version().size()),
              rungs::version().data(), compiled.report().isa.c_str());
  return 0;
}
