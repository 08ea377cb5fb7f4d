// SPDX-License-Identifier: Apache-2.0
// Built by tests/install/pkg_config.cmake with nothing but the flags `pkg-config --cflags --libs
// rungs` prints: compiles x + x for a [1, 4] input and checks the result and the version.
#include <rungs/rungs.hpp>

#include <cstdio>
#include <string_view>
#include <vector>

int main(int argc, char** argv) {
  rungs::Graph graph;
  const rungs::Value x = graph.input("x", {1, 4});
  graph.output("y", graph.add(x, x));
  rungs::Session session(rungs::Device::Cpu);
  const rungs::CompiledGraph compiled = session.compile(graph);
  const std::vector<float> in{1, -2, 3.5f, 0};
  const rungs::NamedInput inputs[] = {{"x", in}};
  const auto out = compiled.run(inputs);
  for (size_t i = 0; i < in.size(); ++i) {
    if (out.at(0).at(i) != 2 * in[i]) {
      std::fprintf(stderr, "pkgconfig consumer: y[%zu] = %g, expected %g\n", i, out[0][i], 2 * in[i]);
      return 1;
    }
  }
  if (argc > 1 && rungs::version() != std::string_view(argv[1])) {
    std::fprintf(stderr, "pkgconfig consumer: rungs::version() is %.*s, expected %s\n",
                 static_cast<int>(rungs::version().size()), rungs::version().data(), argv[1]);
    return 1;
  }
  std::printf("pkgconfig consumer: rungs %.*s ok\n", static_cast<int>(rungs::version().size()),
              rungs::version().data());
  return 0;
}
