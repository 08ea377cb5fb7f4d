// SPDX-License-Identifier: Apache-2.0
// CompileOptions::max_arena_bytes: a graph whose arena would pass the limit is refused with
// Error(ArenaLimit) (past what the platform can address: OutOfRange) at compile time, before its arena (or any kernel) is allocated, and the limit
// is honoured exactly at the boundary; a workspace the machine cannot allocate at run time is
// Error(OutOfRange), and the graph runs once memory is there again.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#if !defined(__EMSCRIPTEN__)
#include <sys/resource.h>
#include <unistd.h>
#endif

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
    expect_error([&] { Session(device).compile(huge, options); },
                 sizeof(size_t) == 8 ? ErrorCode::ArenaLimit : ErrorCode::OutOfRange,
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
  expect_error([&] { session.compile(g, one_less); }, ErrorCode::ArenaLimit,
               "arena needs " + std::to_string(need) + " bytes, more than max_arena_bytes = " + std::to_string(need - 1));

  // The refused compile changed nothing: the graph compiled before still runs.
  std::vector<float> x(64, -1.f);
  const NamedInput in[] = {{"x", x}};
  EXPECT_EQ(fits.run(in)[0], std::vector<float>(64, 1.f));
}

#if !defined(__EMSCRIPTEN__)

// In a child process (a gtest death test): the address space limited to what the process maps now
// plus 64 MiB, a run needing a 256 MiB workspace fails with OutOfRange (docs/errors.md row 46);
// with the limit lifted, the same compiled graph runs. The child exits 0 only if all of it held.
[[noreturn]] void run_out_of_memory_then_recover(Device device) {
  auto check = [](bool ok, const std::string& what) {
    if (!ok) {
      std::fprintf(stderr, "check failed: %s\n", what.c_str());
      std::_Exit(1);
    }
  };
  // y[i, j] = x[i] + z[j] over [8192, 8192]: 256 MiB of arena from 64 KiB of inputs.
  constexpr int64_t n = 8192;
  Graph g;
  g.output("y", g.add(g.input("x", {n, 1}), g.input("z", {1, n})));
  CompiledGraph compiled = Session(device).compile(g);
  std::vector<float> x(n, 1.f), z(n, 2.f);
  const NamedInput in[] = {{"x", x}, {"z", z}};

  rlimit saved{};
  check(getrlimit(RLIMIT_AS, &saved) == 0, "getrlimit");
  size_t pages = 0;
  std::ifstream("/proc/self/statm") >> pages;
  check(pages > 0, "read /proc/self/statm");
  rlimit low = saved;
  low.rlim_cur = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + (rlim_t{64} << 20);
  check(setrlimit(RLIMIT_AS, &low) == 0, "setrlimit");
  try {
    (void)compiled.run(in);
    check(false, "the run succeeded under the limit");
  } catch (const Error& e) {
    check(e.code() == ErrorCode::OutOfRange, std::string("code of: ") + e.what());
    const std::string want =
        "run: cannot allocate the workspace (arena " + std::to_string(compiled.report().arena_bytes) + " bytes";
    check(std::string(e.what()).find(want) != std::string::npos, std::string("message: ") + e.what());
  }
  check(setrlimit(RLIMIT_AS, &saved) == 0, "restore the limit");
  const std::vector<std::vector<float>> out = compiled.run(in);
  check(out.size() == 1 && out[0].size() == static_cast<size_t>(n * n) && out[0].front() == 3.f &&
            out[0].back() == 3.f,
        "the run after the limit was lifted");
  std::_Exit(0);
}
#endif

TEST(ArenaLimit, AWorkspaceTheMachineCannotAllocateIsOutOfRangeAndTheGraphRecovers) {
#if defined(__EMSCRIPTEN__)
  GTEST_SKIP() << "no address-space limits in wasm (errors.test.mjs J12 covers the wasm heap)";
#else
  if (kSanitized) GTEST_SKIP() << "sanitizers cannot run under an address-space limit";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (Device device : {Device::Cpu, Device::Reference})
    EXPECT_EXIT(run_out_of_memory_then_recover(device), ::testing::ExitedWithCode(0), "") << to_string(device);
#endif
}

}  // namespace
