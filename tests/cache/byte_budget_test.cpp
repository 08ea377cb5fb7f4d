// SPDX-License-Identifier: Apache-2.0
// BucketedCompileCache::set_max_bytes: the byte budget over every compiled bucket (arena + params).
// A compile that does not fit is refused with Error(OutOfRange) naming the bucket and the figures,
// before its arena is allocated or its params uploaded, and leaves the cache as it was.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "rungs/rungs.hpp"
#include "test_util.hpp"

namespace {

using namespace rungs;
using rungs::testing::expect_error;

// x [upper, 8] @ w [8, 8]: arena grows with upper, params do not.
std::pair<Graph, ParamMap> linear(uint64_t upper) {
  Graph g;
  Value x = g.input("x", {static_cast<int64_t>(upper), 8});
  g.output("y", g.matmul(x, g.param("w", {8, 8})));
  return {std::move(g), ParamMap{{"w", std::vector<float>(64, 0.5f)}}};
}

// What one bucket holds, measured on a cache without a budget.
size_t bucket_bytes(uint64_t key) {
  auto probe = BucketedCompileCache::power_of_two_ladder(Device::Reference, 8, 64);
  probe.ensure_graph_with_params(key, linear, {});
  return probe.bytes();
}

TEST(ByteBudget, NoLimitByDefaultAndBytesCountArenaPlusParams) {
  auto cache = BucketedCompileCache::power_of_two_ladder(Device::Reference, 8, 64);
  EXPECT_EQ(cache.max_bytes(), 0u);
  EXPECT_EQ(cache.bytes(), 0u);
  cache.ensure_graph_with_params(5, linear, {});
  cache.ensure_graph_with_params(40, linear, {});
  const CacheStats st = cache.stats();
  EXPECT_EQ(cache.bytes(), st.arena_bytes + st.param_bytes_summed);
  EXPECT_GT(st.param_bytes_summed, 0u);
}

TEST(ByteBudget, ACompilePastTheBudgetIsRefusedAndChangesNothing) {
  const size_t small = bucket_bytes(5), large = bucket_bytes(40);
  auto cache = BucketedCompileCache::power_of_two_ladder(Device::Reference, 8, 64);
  cache.set_max_bytes(small + large - 1);
  ASSERT_TRUE(cache.ensure_graph_with_params(5, linear, {}));
  EXPECT_EQ(cache.bytes(), small);

  int builds = 0;
  auto counted = [&](uint64_t upper) {
    ++builds;
    return linear(upper);
  };
  expect_error([&] { cache.ensure_graph_with_params(40, counted, {}); }, ErrorCode::OutOfRange,
               "BucketedCompileCache: bucket [33, 65) (upper 64)");
  expect_error([&] { cache.ensure_graph_with_params(40, counted, {}); }, ErrorCode::OutOfRange,
               "raise set_max_bytes");
  EXPECT_EQ(builds, 2);  // build ran, compile was refused
  EXPECT_EQ(cache.bytes(), small);
  EXPECT_EQ(cache.compiled_count(), 1u);
  const CacheStats st = cache.stats();
  EXPECT_FALSE(st.buckets[3].compiled);
  EXPECT_EQ(st.buckets[3].failed_compiles, 2u);
  EXPECT_EQ(st.compiles, 1u);

  // The compiled bucket still serves hits; a larger budget lets the refused bucket compile.
  ASSERT_TRUE(cache.ensure_graph_with_params(6, linear, {}));
  cache.set_max_bytes(small + large);
  ASSERT_TRUE(cache.ensure_graph_with_params(40, linear, {}));
  EXPECT_EQ(cache.bytes(), small + large);
  EXPECT_EQ(cache.compiled_count(), 2u);
}

TEST(ByteBudget, AnArenaPastTheBudgetIsRefusedBeforeItIsAllocated) {
  // [2^20, 2^20] inputs: an arena of terabytes, which this test could not survive allocating.
  BucketedCompileCache cache(Device::Cpu, {{1, 2}});
  cache.set_max_bytes(size_t{1} << 20);
  auto huge = [](uint64_t) {
    Graph g;
    g.output("y", g.relu(g.input("x", {int64_t{1} << 20, int64_t{1} << 20})));
    return g;
  };
  // A 32-bit build refuses it before the budget can: no budget would make it addressable, so the
  // refusal is passed on as the compiler gave it (ArenaLimit is only the limits' refusal).
  expect_error([&] { cache.get_or_compile(1, huge); }, ErrorCode::OutOfRange,
               sizeof(size_t) == 8 ? "bucket [1, 2) (upper 1): the arena does not fit the byte budget of 1048576 bytes"
                                   : "compile: the arena needs 8796093022208 bytes, more than this platform can address");
  EXPECT_EQ(cache.bytes(), 0u);
  EXPECT_EQ(cache.compiled_count(), 0u);
}

TEST(ByteBudget, ParamsPastTheBudgetAreRefusedBeforeUpload) {
  // A small arena and 1M param values: refused on the values' f32 size, before set_param copies them.
  BucketedCompileCache cache(Device::Reference, {{1, 3}});
  cache.set_max_bytes(1 << 20);
  auto big_params = [](uint64_t upper) {
    Graph g;
    Value x = g.input("x", {static_cast<int64_t>(upper), 1024});
    g.output("y", g.matmul(x, g.param("w", {1024, 1024})));
    return std::pair<Graph, ParamMap>{std::move(g), ParamMap{{"w", std::vector<float>(1 << 20, 0.f)}}};
  };
  expect_error([&] { cache.ensure_graph_with_params(2, big_params, {}); }, ErrorCode::OutOfRange,
               "1048576 param values at 4 bytes, before upload");
  EXPECT_EQ(cache.bytes(), 0u);
  EXPECT_EQ(cache.compiled_count(), 0u);
}

TEST(ByteBudget, ParamsAreCountedAtTheWidthThePolicyStores) {
  // The same 1M values under bf16 weights: 2 bytes each, whether the policy is the cache's or the
  // options' (the policy the graph was compiled with, compared as a value).
  auto big_params = [](uint64_t upper) {
    Graph g;
    Value x = g.input("x", {static_cast<int64_t>(upper), 1024});
    g.output("y", g.matmul(x, g.param("w", {1024, 1024})));
    return std::pair<Graph, ParamMap>{std::move(g), ParamMap{{"w", std::vector<float>(1 << 20, 0.f)}}};
  };
  auto cache = BucketedCompileCache::with_policy(Device::Reference, {{1, 3}}, PrecisionPolicy::bf16_weights());
  cache.set_max_bytes(1 << 20);
  expect_error([&] { cache.ensure_graph_with_params(2, big_params, {}); }, ErrorCode::OutOfRange,
               "1048576 param values at 2 bytes, before upload");
  BucketedCompileCache f32_cache(Device::Reference, {{1, 3}});
  f32_cache.set_max_bytes(1 << 20);
  CompileOptions f16;
  f16.policy = PrecisionPolicy::f16_weights();
  expect_error([&] { f32_cache.ensure_graph_with_params(2, big_params, f16); }, ErrorCode::OutOfRange,
               "1048576 param values at 2 bytes, before upload");
  // On the Cpu device, whose GEMM keeps the weight in bf16, they fit a budget that holds them at
  // 2 bytes (and would not at 4).
  auto cpu = BucketedCompileCache::with_policy(Device::Cpu, {{1, 3}}, PrecisionPolicy::bf16_weights());
  cpu.set_max_bytes((size_t{1} << 21) + (size_t{1} << 20));
  EXPECT_TRUE(cpu.ensure_graph_with_params(2, big_params, {}).has_value());
  EXPECT_LT(cpu.bytes(), size_t{1} << 22);
}

TEST(BucketedCacheThreads, ByteBudgetHoldsUnderRacingCompiles) {
  RUNGS_SKIP_WITHOUT_THREADS();
  const size_t one = bucket_bytes(5);  // the buckets below all have upper 8 .. 15: similar sizes
  std::vector<Range> ranges;
  for (uint64_t i = 0; i < 8; ++i) ranges.push_back({8 * i + 1, 8 * i + 9});
  BucketedCompileCache cache(Device::Reference, ranges);
  cache.set_max_bytes(3 * one + one / 2);
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (uint64_t t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      try {
        cache.ensure_graph_with_params(8 * t + 4, linear, {});
      } catch (const Error& e) {
        if (e.code() == ErrorCode::OutOfRange) ++refused;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_LE(cache.bytes(), cache.max_bytes());
  EXPECT_EQ(cache.compiled_count() + static_cast<size_t>(refused.load()), 8u);
  EXPECT_GE(cache.compiled_count(), 1u);
  EXPECT_EQ(cache.stats().arena_bytes + cache.stats().param_bytes_summed, cache.bytes());
}

}  // namespace
