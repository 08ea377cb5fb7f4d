// SPDX-License-Identifier: Apache-2.0
// Concurrency of the run path (api.md 5.2): one ThreadPool shared by several callers, and one
// CompiledGraph with a multi-threaded pool run from several threads at once, give every caller
// its own, exact results. Run under ThreadSanitizer by scripts/test (filter *Thread*).
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>

#include "backends/thread_pool.hpp"
#include "rungs/rungs.hpp"
#include "test_util.hpp"

namespace {

using namespace rungs;
using rungs::testing::random_vector;

TEST(ThreadPoolConcurrency, SeveralCallersShareOnePoolAndEachGetsItsChunks) {
  RUNGS_SKIP_WITHOUT_THREADS();
  backend::ThreadPool pool(3);
  constexpr int kCallers = 4, kRounds = 30, kN = 1000;
  std::vector<std::vector<int>> hits(kCallers, std::vector<int>(kN, 0));
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c)
    callers.emplace_back([&, c] {
      for (int r = 0; r < kRounds; ++r)
        pool.parallel_for(kN, 4, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) ++hits[c][i];  // chunks of one call never overlap
        });
    });
  for (auto& t : callers) t.join();
  for (int c = 0; c < kCallers; ++c)
    for (int i = 0; i < kN; ++i) ASSERT_EQ(hits[c][i], kRounds) << "caller " << c << ", index " << i;
}

TEST(ThreadPoolConcurrency, AnExceptionReachesItsOwnCallerOnly) {
  RUNGS_SKIP_WITHOUT_THREADS();
  backend::ThreadPool pool(2);
  std::atomic<int> thrown{0}, clean{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&, c] {
      try {
        // The chunk holding index 40 throws: a worker's part when the call is split, the whole
        // range when the pool was busy with another caller and the call ran serially.
        pool.parallel_for(64, 3, [&](int64_t b, int64_t e) {
          if (c % 2 == 0 && b <= 40 && 40 < e) throw std::runtime_error("chunk failed");
        });
        ++clean;
      } catch (const std::runtime_error&) {
        ++thrown;
      }
    });
  for (auto& t : callers) t.join();
  EXPECT_EQ(thrown.load(), 2);
  EXPECT_EQ(clean.load(), 2);
}

TEST(ThreadPoolConcurrency, OneCompiledGraphWithAPoolRunFromSeveralThreads) {
  RUNGS_SKIP_WITHOUT_THREADS();
  Graph g;
  Value x = g.input("x", {128, 96});
  Value h = g.gelu(g.add(g.matmul(x, g.param("w", {96, 96})), g.param("b", {96})));
  g.output("y", g.softmax(g.layer_norm(h, g.param("gamma", {96}), g.param("beta", {96})), -1));
  CompileOptions four;
  four.threads = 4;
  CompiledGraph c = Session(Device::Cpu).compile(g, four);
  uint32_t seed = 1;
  for (const std::string& name : c.param_names())
    c.set_param(name, random_vector(static_cast<size_t>(shape_numel(c.param_shape(name))), seed++));

  constexpr int kThreads = 4, kRounds = 8;
  std::vector<std::vector<float>> inputs, expect;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back(random_vector(128 * 96, 100 + t));
    const NamedInput in{"x", inputs.back()};
    expect.push_back(c.run({&in, 1})[0]);
  }
  std::vector<int> same(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      const NamedInput in{"x", inputs[t]};
      for (int r = 0; r < kRounds; ++r) same[t] += c.run({&in, 1})[0] == expect[t];
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(same[t], kRounds) << "thread " << t << " got another caller's bits";
}

}  // namespace

namespace {

TEST(ThreadPoolConcurrency, SetParamWhileOtherThreadsRunIsSeenWhole) {
  RUNGS_SKIP_WITHOUT_THREADS();
  Graph g;
  Value x = g.input("x", {32, 64});
  g.output("y", g.matmul(x, g.param("w", {64, 64})));
  CompileOptions two;
  two.threads = 2;
  CompiledGraph c = Session(Device::Cpu).compile(g, two);
  const std::vector<float> x_data = random_vector(32 * 64, 7);
  const std::vector<float> wa(64 * 64, 1.f), wb(64 * 64, -0.5f);
  const NamedInput in{"x", x_data};
  c.set_param("w", wb);
  const std::vector<float> out_b = c.run({&in, 1})[0];
  c.set_param("w", wa);
  const std::vector<float> out_a = c.run({&in, 1})[0];

  std::atomic<bool> stop{false};
  std::atomic<int> runs{0}, torn{0};
  std::vector<std::thread> runners;
  for (int t = 0; t < 3; ++t)
    runners.emplace_back([&] {
      while (!stop.load()) {
        const auto y = c.run({&in, 1})[0];
        if (y != out_a && y != out_b) ++torn;
        ++runs;
      }
    });
  for (int i = 0; i < 40; ++i) c.set_param("w", i % 2 ? wa : wb);
  while (runs.load() < 20) std::this_thread::yield();
  stop = true;
  for (auto& t : runners) t.join();
  EXPECT_EQ(torn.load(), 0) << "a run saw a half-set param";
  EXPECT_TRUE(c.param_is_set("w"));
}

}  // namespace
