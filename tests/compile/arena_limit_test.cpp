// CompileOptions::max_arena_bytes: a graph whose arena would pass the limit is refused with
// Error(OutOfRange) at compile time, before its arena (or any kernel) is allocated, and the limit
// is honoured exactly at the boundary.
#include <gtest/gtest.h>

#include "rungs/rungs.hpp"
#include "test_util.hpp"

namespace {

using namespace rungs;
using rungs::testing::expect_error;

// y = relu(x) + 1 over [rows, cols]: the arena holds x and one intermediate at most.
Graph relu_graph(int64_t rows, int64_t cols) {
  Graph g;
  Value x = g.input("x", {rows, cols});
  g.output("y", g.add(g.relu(x), g.constant({1.f}, {1})));
  return g;
}

TEST(ArenaLimit, RefusesAHugeArenaBeforeAllocatingIt) {
  // 2^40 floats (4 TiB) per buffer: had compile allocated it, this test would die, not throw.
  const Graph huge = relu_graph(int64_t{1} << 20, int64_t{1} << 20);
  for (Device device : {Device::Cpu, Device::Reference}) {
    CompileOptions options;
    options.max_arena_bytes = size_t{1} << 30;
    // (A 32-bit build refuses it earlier: "more than this platform can address".)
    expect_error([&] { Session(device).compile(huge, options); }, ErrorCode::OutOfRange,
                 sizeof(size_t) == 8 ? "compile: the arena needs 8796093022208 bytes, more than max_arena_bytes = 1073741824"
                                     : "compile: the arena needs 8796093022208 bytes, more than this platform can address");
  }
}

TEST(ArenaLimit, TheLimitIsInclusiveAndTheSessionStaysUsable) {
  const Graph g = relu_graph(4, 16);
  Session session(Device::Cpu);
  const size_t need = session.compile(g).report().arena_bytes;
  ASSERT_GT(need, 0u);

  CompileOptions exact;
  exact.max_arena_bytes = need;
  CompiledGraph fits = session.compile(g, exact);
  EXPECT_EQ(fits.report().arena_bytes, need);

  CompileOptions one_less;
  one_less.max_arena_bytes = need - 1;
  expect_error([&] { session.compile(g, one_less); }, ErrorCode::OutOfRange,
               "arena needs " + std::to_string(need) + " bytes, more than max_arena_bytes = " + std::to_string(need - 1));

  // The refused compile changed nothing: the graph compiled before still runs.
  std::vector<float> x(64, -1.f);
  const NamedInput in[] = {{"x", x}};
  EXPECT_EQ(fits.run(in)[0], std::vector<float>(64, 1.f));
}

}  // namespace
