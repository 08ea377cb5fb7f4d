// SPDX-License-Identifier: Apache-2.0
// CompileCache: exact keys, LRU by count, byte budget, refusal of an entry bigger than the budget.
#include <gtest/gtest.h>

#include "test_util.hpp"

#include <atomic>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "rungs/cache.hpp"
#include "rungs/error.hpp"

namespace rungs {
namespace {

// A graph whose size depends on the key: x [key, 8] @ w [8, 8].
std::pair<Graph, ParamMap> sized(uint64_t key) {
  Graph g;
  Value x = g.input("x", {static_cast<int64_t>(key), 8});
  g.output("y", g.relu(g.matmul(x, g.param("w", {8, 8}))));
  return {std::move(g), ParamMap{{"w", std::vector<float>(64, 0.5f)}}};
}

size_t entry_bytes(uint64_t key) {
  CompileCache probe(Device::Reference);
  const CompileReport& r = probe.get_or_compile(key, sized)->report();
  return r.arena_bytes + r.param_bytes;
}

TEST(CompileCache, ExactKeysHitsAndClear) {
  CompileCache c(Device::Reference);
  int calls = 0;
  auto build = [&](uint64_t k) { ++calls; return sized(k); };
  auto a = c.get_or_compile(4, build);
  auto b = c.get_or_compile(5, build);
  auto a2 = c.get_or_compile(4, build);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(a.get(), a2.get());
  EXPECT_NE(a.get(), b.get());
  EXPECT_EQ(a->input_shape("x"), (Shape{4, 8}));
  EXPECT_EQ(b->input_shape("x"), (Shape{5, 8}));
  EXPECT_TRUE(a->param_is_set("w"));
  EXPECT_TRUE(c.contains(4));
  EXPECT_FALSE(c.contains(6));
  EXPECT_EQ(c.size(), 2u);
  EXPECT_EQ(c.hits(), 1u);
  EXPECT_EQ(c.compiles(), 2u);
  EXPECT_EQ(c.bytes(), entry_bytes(4) + entry_bytes(5));
  c.clear();
  EXPECT_EQ(c.size(), 0u);
  EXPECT_EQ(c.bytes(), 0u);
  EXPECT_FALSE(c.contains(4));
  EXPECT_EQ(a->input_shape("x"), (Shape{4, 8}));  // a handed-out graph outlives clear()
  c.get_or_compile(4, build);
  EXPECT_EQ(calls, 3);
}

TEST(CompileCache, EvictsLeastRecentlyUsedPastMaxEntries) {
  CompileCache c(Device::Reference, /*max_entries=*/2);
  c.get_or_compile(1, sized);
  c.get_or_compile(2, sized);
  c.get_or_compile(1, sized);  // 1 is now the most recent
  c.get_or_compile(3, sized);  // evicts 2
  EXPECT_TRUE(c.contains(1));
  EXPECT_FALSE(c.contains(2));
  EXPECT_TRUE(c.contains(3));
  EXPECT_EQ(c.size(), 2u);
  EXPECT_EQ(c.evictions(), 1u);
}

TEST(CompileCache, EvictsPastTheByteBudget) {
  const size_t small = entry_bytes(8);
  const size_t big = entry_bytes(64);
  ASSERT_GT(big, small);
  CompileCache c(Device::Reference, 0, /*max_bytes=*/small + big);
  c.get_or_compile(8, sized);
  c.get_or_compile(7, sized);
  EXPECT_EQ(c.size(), 2u);
  c.get_or_compile(8, sized);   // 7 is least recent
  c.get_or_compile(64, sized);  // needs room: 7 (least recent) goes, 8 + 64 fit
  EXPECT_TRUE(c.contains(64));
  EXPECT_FALSE(c.contains(7));
  EXPECT_TRUE(c.contains(8));
  EXPECT_EQ(c.size(), 2u);
  EXPECT_EQ(c.bytes(), small + big);
  EXPECT_EQ(c.evictions(), 1u);
}

TEST(CompileCache, RefusesAnEntryBiggerThanTheWholeBudget) {
  const size_t small = entry_bytes(2);
  CompileCache c(Device::Reference, 0, /*max_bytes=*/small + 1);
  c.get_or_compile(2, sized);
  try {
    c.get_or_compile(200, sized);
    FAIL() << "expected Error(OutOfRange)";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::OutOfRange) << e.what();
    EXPECT_NE(std::string(e.what()).find("budget"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(c.contains(2));  // nothing evicted for the refused entry
  EXPECT_FALSE(c.contains(200));
  EXPECT_EQ(c.size(), 1u);
  EXPECT_EQ(c.evictions(), 0u);
}

TEST(CompileCache, ParamsPastTheWholeBudgetAreRefusedBeforeUpload) {
  CompileCache c(Device::Reference, 0, /*max_bytes=*/1 << 20);
  auto big_params = [](uint64_t key) {
    Graph g;
    Value x = g.input("x", {static_cast<int64_t>(key), 1024});
    g.output("y", g.matmul(x, g.param("w", {1024, 1024})));
    return std::pair<Graph, ParamMap>{std::move(g), ParamMap{{"w", std::vector<float>(1 << 20, 0.f)}}};
  };
  try {
    c.get_or_compile(2, big_params);
    FAIL() << "expected Error(OutOfRange)";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::OutOfRange) << e.what();
    EXPECT_NE(std::string(e.what()).find("1048576 param values at 4 bytes, before upload), more than the whole budget of 1048576"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(c.size(), 0u);
  EXPECT_EQ(c.bytes(), 0u);
  EXPECT_EQ(c.compiles(), 0u);
}

TEST(CompileCache, ThrowingBuildStoresNothingAndRetries) {
  CompileCache c(Device::Reference);
  EXPECT_THROW(c.get_or_compile(3, [](uint64_t) -> Graph { throw std::runtime_error("no"); }), std::runtime_error);
  EXPECT_FALSE(c.contains(3));
  EXPECT_TRUE(c.get_or_compile(3, sized));
  EXPECT_TRUE(c.contains(3));
}

TEST(CompileCache, OneKeyCompilesOnceUnderARace) {
  RUNGS_SKIP_WITHOUT_THREADS();
  CompileCache c(Device::Reference, 4);
  std::atomic<int> builds{0};
  auto build = [&](uint64_t k) {
    ++builds;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return sized(k);
  };
  std::vector<std::future<CompiledGraph*>> f;
  for (int i = 0; i < 8; ++i)
    f.push_back(std::async(std::launch::async, [&, i] { return c.get_or_compile(10 + i % 2, build).get(); }));
  std::vector<CompiledGraph*> got;
  for (auto& x : f) got.push_back(x.get());
  EXPECT_EQ(builds.load(), 2);
  for (int i = 2; i < 8; ++i) EXPECT_EQ(got[i], got[i % 2]);
}

}  // namespace
}  // namespace rungs
