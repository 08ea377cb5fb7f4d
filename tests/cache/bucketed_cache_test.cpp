// SPDX-License-Identifier: Apache-2.0
// BucketedCompileCache, api.md 5.1 one semantic per test: ladders through the cache, lookup,
// lazy compiles and build-call counts, nullopt paths, validation, policy, params, run_padded and
// run_padded_mixed, retry after a throwing build, stats.
#include <gtest/gtest.h>

#include "test_util.hpp"
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "rungs/cache.hpp"
#include "rungs/error.hpp"

namespace rungs {
namespace {

using R = std::vector<Range>;

using rungs::testing::expect_error;

// x [upper, 2] -> y = x * [2, 3] (row-local), total = sum of x over rows ([2], extent-free).
Graph rows_graph(uint64_t upper) {
  Graph g;
  Value x = g.input("x", {static_cast<int64_t>(upper), 2});
  g.output("y", g.mul(x, g.constant({2.0f, 3.0f}, {2})));
  g.output("total", g.sum(x, {0}));
  return g;
}

// Counts its calls and records the uppers it was asked for.
struct CountingBuild {
  int* calls;
  std::vector<uint64_t>* uppers;
  Graph operator()(uint64_t upper) const {
    ++*calls;
    uppers->push_back(upper);
    return rows_graph(upper);
  }
};

std::vector<float> iota_rows(size_t rows, size_t inner) {
  std::vector<float> v(rows * inner);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i + 1);
  return v;
}

TEST(BucketedCache, PowerOfTwoLadderTables) {
  auto c = BucketedCompileCache::power_of_two_ladder(Device::Reference, 8, 256);
  EXPECT_EQ(R(c.buckets().begin(), c.buckets().end()),
            (R{{1, 9}, {9, 17}, {17, 33}, {33, 65}, {65, 129}, {129, 257}}));
  EXPECT_EQ(c.total_buckets(), 6u);
  EXPECT_EQ(BucketedCompileCache::power_of_two_ladder(Device::Reference, 8, 64).total_buckets(), 4u);
  auto c10 = BucketedCompileCache::power_of_two_ladder(Device::Reference, 10, 64);
  EXPECT_EQ(R(c10.buckets().begin(), c10.buckets().end()), (R{{1, 17}, {17, 33}, {33, 65}}));
  auto c20 = BucketedCompileCache::power_of_two_ladder(Device::Reference, 8, 20);
  EXPECT_EQ(c20.total_buckets(), 3u);
  EXPECT_EQ(c20.buckets().back(), (Range{17, 33}));
  auto c16 = BucketedCompileCache::power_of_two_ladder(Device::Reference, 16, 16);
  EXPECT_EQ(R(c16.buckets().begin(), c16.buckets().end()), (R{{1, 17}}));
  auto c1 = BucketedCompileCache::power_of_two_ladder_with_policy(Device::Reference, 1, 32, PrecisionPolicy::f32());
  EXPECT_EQ(R(c1.buckets().begin(), c1.buckets().end()), (R{{1, 2}, {2, 3}, {3, 5}, {5, 9}, {9, 17}, {17, 33}}));
}

TEST(BucketedCache, PowerOfTwoLadderErrors) {
  expect_error([] { BucketedCompileCache::power_of_two_ladder(Device::Reference, 0, 8); },
               ErrorCode::InvalidArgument, "min must be >= 1");
  expect_error([] { BucketedCompileCache::power_of_two_ladder(Device::Reference, 9, 8); },
               ErrorCode::InvalidArgument, "max");
  expect_error([] { BucketedCompileCache::power_of_two_ladder(Device::Reference, 1, (uint64_t{1} << 63) + 1); },
               ErrorCode::OutOfRange, "2^63");
}

TEST(BucketedCache, ConstructorValidationMessages) {
  expect_error([] { BucketedCompileCache(Device::Reference, R{}); }, ErrorCode::InvalidArgument, "at least 1 bucket");
  expect_error([] { BucketedCompileCache(Device::Reference, R{{1, 9}, {9, 9}}); }, ErrorCode::InvalidArgument,
               "empty");
  expect_error([] { BucketedCompileCache(Device::Reference, R{{1, 10}, {9, 17}}); }, ErrorCode::InvalidArgument,
               "overlap");
  expect_error([] { BucketedCompileCache::with_policy(Device::Reference, R{{9, 17}, {1, 9}}, std::nullopt); },
               ErrorCode::InvalidArgument, "overlap");
  BucketedCompileCache touching(Device::Reference, R{{1, 9}, {9, 17}, {30, 40}});  // touching and gaps: fine
  EXPECT_EQ(touching.total_buckets(), 3u);
}

TEST(BucketedCache, BucketForEdgesGapsAndKeyZero) {
  BucketedCompileCache c(Device::Reference, R{{0, 5}, {5, 9}, {9, 17}, {20, 30}});
  EXPECT_EQ(c.bucket_for(0), 0u);
  EXPECT_EQ(c.bucket_for(4), 0u);
  EXPECT_EQ(c.bucket_for(5), 1u);
  EXPECT_EQ(c.bucket_for(8), 1u);
  EXPECT_EQ(c.bucket_for(9), 2u);
  EXPECT_EQ(c.bucket_for(16), 2u);
  EXPECT_EQ(c.bucket_for(17), std::nullopt);  // gap
  EXPECT_EQ(c.bucket_for(19), std::nullopt);
  EXPECT_EQ(c.bucket_for(20), 3u);
  EXPECT_EQ(c.bucket_for(29), 3u);
  EXPECT_EQ(c.bucket_for(30), std::nullopt);
  EXPECT_EQ(c.bucket_for(std::numeric_limits<uint64_t>::max()), std::nullopt);

  // Key 0 is legal when a bucket holds it; it compiles at upper = end - 1.
  int calls = 0;
  std::vector<uint64_t> uppers;
  auto e = c.get_or_compile(0, CountingBuild{&calls, &uppers});
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->upper, 4u);
  EXPECT_EQ(uppers, std::vector<uint64_t>{4});
}

TEST(BucketedCache, LazyCompileOncePerBucket) {
  auto c = BucketedCompileCache::power_of_two_ladder(Device::Reference, 8, 64);
  int calls = 0;
  std::vector<uint64_t> uppers;
  CountingBuild build{&calls, &uppers};
  EXPECT_EQ(c.compiled_count(), 0u);
  EXPECT_EQ(calls, 0);

  auto a = c.get_or_compile(5, build);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->upper, 8u);
  EXPECT_EQ(c.compiled_count(), 1u);
  auto b = c.get_or_compile(8, build);  // same bucket: no build, same graph
  auto a2 = c.get_or_compile(1, build);
  ASSERT_TRUE(b && a2);
  EXPECT_EQ(b->graph, a->graph);
  EXPECT_EQ(a2->graph, a->graph);
  EXPECT_EQ(calls, 1);

  auto d = c.get_or_compile(9, build);  // next bucket
  ASSERT_TRUE(d);
  EXPECT_EQ(d->upper, 16u);
  EXPECT_NE(d->graph, a->graph);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(c.compiled_count(), 2u);
  EXPECT_EQ(uppers, (std::vector<uint64_t>{8, 16}));
  EXPECT_EQ(a->graph->input_shape("x"), (Shape{8, 2}));

  CacheStats s = c.stats();
  EXPECT_EQ(s.compiles, 2u);
  EXPECT_EQ(s.hits, 2u);
  EXPECT_EQ(s.buckets[0].hits, 2u);
  EXPECT_EQ(s.buckets[0].compiles, 1u);
  EXPECT_TRUE(s.buckets[1].compiled);
  EXPECT_FALSE(s.buckets[2].compiled);
}

TEST(BucketedCache, OutOfRangeReturnsNulloptWithoutBuildOrChange) {
  auto c = BucketedCompileCache::power_of_two_ladder(Device::Reference, 8, 64);
  int calls = 0;
  auto count_graph = [&](uint64_t u) { ++calls; return rows_graph(u); };
  auto count_hir = [&](uint64_t) { ++calls; return HirModule(); };
  auto count_pair = [&](uint64_t u) { ++calls; return std::pair<Graph, ParamMap>(rows_graph(u), {}); };
  auto count_hir_pair = [&](uint64_t) { ++calls; return std::pair<HirModule, ParamMap>(HirModule(), {}); };
  const std::vector<float> x(2 * 70, 1.0f);
  const PaddedInput in[] = {{"x", x, 2}};
  const CacheRunInput mixed[] = {{"x", x, 2}};
  for (uint64_t key : {uint64_t{0}, uint64_t{65}, uint64_t{1000}}) {
    EXPECT_FALSE(c.get_or_compile(key, count_graph));
    EXPECT_FALSE(c.get_or_compile_with_options(key, count_graph, CompileOptions{}));
    EXPECT_FALSE(c.get_or_compile_hir(key, count_hir));
    EXPECT_FALSE(c.get_or_compile_hir_with_options(key, count_hir, CompileOptions{}));
    EXPECT_FALSE(c.ensure_graph_with_params(key, count_pair, CompileOptions{}));
    EXPECT_FALSE(c.ensure_hir_with_params(key, count_hir_pair, CompileOptions{}));
    EXPECT_FALSE(c.run_padded(key, 70, count_graph, in, {}));
    EXPECT_FALSE(c.run_padded_mixed(key, 70, count_graph, mixed, {}));
  }
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(c.compiled_count(), 0u);
  CacheStats s = c.stats();
  EXPECT_EQ(s.out_of_range, 24u);
  EXPECT_EQ(s.hits + s.compiles + s.runs, 0u);
}

TEST(BucketedCache, ThrowingBuildLeavesBucketRetryable) {
  auto c = BucketedCompileCache::power_of_two_ladder(Device::Reference, 8, 64);
  auto bad = [](uint64_t) -> Graph { throw std::runtime_error("build failed on purpose"); };
  EXPECT_THROW(c.get_or_compile(3, bad), std::runtime_error);
  EXPECT_EQ(c.compiled_count(), 0u);
  EXPECT_FALSE(c.stats().buckets[0].compiled);
  EXPECT_EQ(c.stats().buckets[0].failed_compiles, 1u);

  // A compile error (here: a param upload with the wrong size) propagates the same way.
  auto bad_params = [](uint64_t u) {
    Graph g;
    Value x = g.input("x", {static_cast<int64_t>(u), 2});
    g.output("y", g.matmul(x, g.param("w", {2, 2})));
    return std::pair<Graph, ParamMap>(std::move(g), ParamMap{{"w", {1.0f, 2.0f, 3.0f}}});
  };
  expect_error([&] { c.ensure_graph_with_params(3, bad_params, CompileOptions{}); }, ErrorCode::ShapeMismatch, "'w'");
  EXPECT_EQ(c.compiled_count(), 0u);

  int calls = 0;
  std::vector<uint64_t> uppers;
  auto e = c.get_or_compile(3, CountingBuild{&calls, &uppers});  // retried, now compiles
  ASSERT_TRUE(e);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(c.compiled_count(), 1u);
  EXPECT_EQ(c.stats().buckets[0].failed_compiles, 2u);
  EXPECT_EQ(c.stats().buckets[0].compiles, 1u);
}

Graph matmul_graph(uint64_t upper) {
  Graph g;
  Value x = g.input("x", {static_cast<int64_t>(upper), 4});
  g.output("y", g.matmul(x, g.param("w", {4, 3})));
  return g;
}

TEST(BucketedCache, PolicyOfTheCacheUnlessOptionsCarryOne) {
  auto c = BucketedCompileCache::power_of_two_ladder_with_policy(Device::Reference, 8, 16,
                                                                 PrecisionPolicy::bf16_weights());
  auto e = c.get_or_compile(4, matmul_graph);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->graph->report().policy, "bf16_weights");
  CompileOptions f32;
  f32.policy = PrecisionPolicy::f32();
  auto f = c.get_or_compile_with_options(12, matmul_graph, f32);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->graph->report().policy, "f32");

  auto plain = BucketedCompileCache::power_of_two_ladder(Device::Reference, 8, 16);
  EXPECT_EQ(plain.get_or_compile(4, matmul_graph)->graph->report().policy, "f32");
}

TEST(BucketedCache, EnsureWithParamsUploadsOnceAndSkipsBuildWhenCompiled) {
  auto c = BucketedCompileCache::power_of_two_ladder(Device::Reference, 4, 8);
  int calls = 0;
  const std::vector<float> w{1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1};  // [4, 3]
  auto build = [&](uint64_t u) {
    ++calls;
    return std::pair<Graph, ParamMap>(matmul_graph(u), ParamMap{{"w", w}});
  };
  auto e = c.ensure_graph_with_params(3, build, CompileOptions{});
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->graph->param_is_set("w"));
  std::vector<float> x(4 * 4, 0.0f);
  x[0] = 1;
  x[1] = 2;
  x[2] = 3;
  x[3] = 4;
  const NamedInput in[] = {{"x", x}};
  auto out = e->graph->run(in);
  EXPECT_EQ(std::vector<float>(out[0].begin(), out[0].begin() + 3), (std::vector<float>{5, 6, 7}));
  EXPECT_TRUE(c.ensure_graph_with_params(4, build, CompileOptions{}));
  EXPECT_EQ(calls, 1);

  // The HIR variant: a linear block whose params the map fills.
  int hcalls = 0;
  auto hbuild = [&](uint64_t u) {
    ++hcalls;
    HirModule m;
    Value x = m.input("x", {static_cast<int64_t>(u), 2});
    m.output("y", m.linear(x, "fc", 2));
    return std::pair<HirModule, ParamMap>(std::move(m), ParamMap{{"fc.weight", {1, 0, 0, 1}}, {"fc.bias", {10, 20}}});
  };
  auto h = c.ensure_hir_with_params(6, hbuild, CompileOptions{});
  ASSERT_TRUE(h);
  EXPECT_EQ(h->upper, 8u);
  EXPECT_TRUE(h->graph->param_is_set("fc.weight"));
  EXPECT_TRUE(h->graph->param_is_set("fc.bias"));
  EXPECT_TRUE(c.ensure_hir_with_params(5, hbuild, CompileOptions{}));
  EXPECT_EQ(hcalls, 1);
  EXPECT_EQ(c.compiled_count(), 2u);
}

TEST(BucketedCache, GetOrCompileHirCompilesTheModule) {
  auto c = BucketedCompileCache::power_of_two_ladder(Device::Reference, 8, 16);
  int calls = 0;
  auto build = [&](uint64_t u) {
    ++calls;
    HirModule m;
    Value x = m.input("x", {static_cast<int64_t>(u), 3});
    m.output("y", m.linear(x, "fc", 5, Activation::Relu));
    return m;
  };
  auto e = c.get_or_compile_hir(10, build);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->upper, 16u);
  EXPECT_EQ(e->graph->output_shape("y"), (Shape{16, 5}));
  EXPECT_TRUE(c.get_or_compile_hir_with_options(16, build, CompileOptions{}));
  EXPECT_EQ(calls, 1);
}

// set_compile_options: what run_padded* and get_or_compile compile with when the call names no
// options; a bucket compiled before the change keeps its graph, and the stats count a lazy compile
// as a compile, not a hit.
TEST(BucketedCache, CompileOptionsApplyToLaterCompiles) {
  auto c = BucketedCompileCache::power_of_two_ladder(Device::Cpu, 8, 32);
  EXPECT_TRUE(c.compile_options().fusion);
  const std::vector<float> x = iota_rows(5, 2);
  const PaddedInput in[] = {{"x", x, 2}};
  const size_t inners[] = {2, 0};
  ASSERT_TRUE(c.run_padded(5, 5, rows_graph, in, inners));
  CompileOptions options;
  options.fusion = false;
  options.threads = 1;
  c.set_compile_options(options);
  EXPECT_FALSE(c.compile_options().fusion);
  EXPECT_EQ(c.compile_options().threads, 1);
  const std::vector<float> x12 = iota_rows(12, 2);
  const PaddedInput in12[] = {{"x", x12, 2}};
  ASSERT_TRUE(c.run_padded(12, 12, rows_graph, in12, inners));
  auto first = c.get_or_compile(5, rows_graph);
  auto second = c.get_or_compile(12, rows_graph);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(second->graph->report().threads, 1);
  const bool fused_first = std::any_of(first->graph->report().passes.begin(), first->graph->report().passes.end(),
                                       [](const PassReport& p) { return p.name.find("fuse") != std::string::npos; });
  const bool fused_second = std::any_of(second->graph->report().passes.begin(), second->graph->report().passes.end(),
                                        [](const PassReport& p) { return p.name.find("fuse") != std::string::npos; });
  EXPECT_TRUE(fused_first) << "compiled before the change: its own (default) options";
  EXPECT_FALSE(fused_second) << "fusion off: no fusion pass ran";
  const CacheStats s = c.stats();
  EXPECT_EQ(s.compiles, 2u);
  EXPECT_EQ(s.runs, 2u);
  EXPECT_EQ(s.hits, 2u) << "the two get_or_compile calls; the runs that compiled are not hits";
}

TEST(BucketedCache, RunPaddedReusesOneGraphAcrossActualsAndSlices) {
  auto c = BucketedCompileCache::power_of_two_ladder(Device::Reference, 8, 32);
  int calls = 0;
  std::vector<uint64_t> uppers;
  CountingBuild build{&calls, &uppers};
  const size_t inners[] = {2, 0};  // y sliced, total unsliced
  for (size_t actual : {9, 12, 16}) {  // one bucket: 9..17, upper 16
    const std::vector<float> x = iota_rows(actual, 2);
    const PaddedInput in[] = {{"x", x, 2}};
    auto run = c.run_padded(actual, actual, build, in, inners);
    ASSERT_TRUE(run);
    EXPECT_EQ(run->upper, 16u);
    ASSERT_EQ(run->outputs.size(), 2u);
    std::vector<float> want_y;
    float sum0 = 0, sum1 = 0;
    for (size_t r = 0; r < actual; ++r) {
      want_y.push_back(2 * x[2 * r]);
      want_y.push_back(3 * x[2 * r + 1]);
      sum0 += x[2 * r];
      sum1 += x[2 * r + 1];
    }
    EXPECT_EQ(run->outputs[0], want_y);                            // sliced to actual rows
    EXPECT_EQ(run->outputs[1], (std::vector<float>{sum0, sum1}));  // unsliced, padding added zeros
  }
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(uppers, std::vector<uint64_t>{16});
  EXPECT_EQ(c.compiled_count(), 1u);
}

TEST(BucketedCache, RunPaddedOutputInnersMissingOrZeroMeanUnsliced) {
  auto c = BucketedCompileCache::power_of_two_ladder(Device::Reference, 8, 8);
  const std::vector<float> x = iota_rows(3, 2);
  const PaddedInput in[] = {{"x", x, 2}};
  auto none = c.run_padded(3, 3, rows_graph, in, {});
  ASSERT_TRUE(none);
  EXPECT_EQ(none->outputs[0].size(), 8u * 2);  // y at the full extent
  EXPECT_EQ(none->outputs[1].size(), 2u);
  const size_t zero[] = {0};
  auto z = c.run_padded(3, 3, rows_graph, in, zero);
  ASSERT_TRUE(z);
  EXPECT_EQ(z->outputs[0], none->outputs[0]);
  EXPECT_EQ(std::vector<float>(z->outputs[0].begin() + 6, z->outputs[0].end()), std::vector<float>(10, 0.0f));
}

TEST(BucketedCache, RunPaddedErrorsCompileNothing) {
  auto c = BucketedCompileCache::power_of_two_ladder(Device::Reference, 8, 16);
  int calls = 0;
  std::vector<uint64_t> uppers;
  CountingBuild build{&calls, &uppers};
  const std::vector<float> nine = iota_rows(9, 2);
  const std::vector<float> odd(5, 1.0f);
  const PaddedInput too_many[] = {{"x", nine, 2}};
  const PaddedInput not_rows[] = {{"x", odd, 2}};
  const PaddedInput zero_inner[] = {{"x", odd, 0}};
  expect_error([&] { c.run_padded(5, 5, build, too_many, {}); }, ErrorCode::InvalidArgument, "exceed upper");
  expect_error([&] { c.run_padded(5, 9, build, not_rows, {}); }, ErrorCode::InvalidArgument, "actual_rows 9 exceed upper 8");
  expect_error([&] { c.run_padded(5, 2, build, not_rows, {}); }, ErrorCode::InvalidArgument, "whole number of rows");
  expect_error([&] { c.run_padded(5, 2, build, zero_inner, {}); }, ErrorCode::InvalidArgument, "inner");
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(c.compiled_count(), 0u);
  // An unknown input is the graph's error, and the cache stays usable.
  const std::vector<float> x = iota_rows(2, 2);
  const PaddedInput unknown[] = {{"nope", x, 2}};
  expect_error([&] { c.run_padded(2, 2, build, unknown, {}); }, ErrorCode::UnknownName, "nope");
  const PaddedInput good[] = {{"x", x, 2}};
  EXPECT_TRUE(c.run_padded(2, 2, build, good, {}));
  EXPECT_EQ(calls, 1);
}

TEST(BucketedCache, RunPaddedMixedPassesUnpaddedInputsThrough) {
  auto c = BucketedCompileCache::power_of_two_ladder(Device::Reference, 4, 8);
  auto build = [](uint64_t u) {
    Graph g;
    Value x = g.input("x", {static_cast<int64_t>(u), 2});
    Value bias = g.input("bias", {2});  // not bucketed
    g.output("y", g.add(x, bias));
    return g;
  };
  const std::vector<float> x = iota_rows(3, 2);
  const std::vector<float> bias{100, 200};
  const CacheRunInput in[] = {{"x", x, size_t{2}}, {"bias", bias, std::nullopt}};
  const size_t inners[] = {2};
  auto run = c.run_padded_mixed(3, 3, build, in, inners);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->upper, 4u);
  EXPECT_EQ(run->outputs[0], (std::vector<float>{101, 202, 103, 204, 105, 206}));
}

TEST(BucketedCache, RunPaddedTakesIntegerAndBoolInputsExactly) {
  // ids as int64 (padded), a bias as int32 and a flag as bool (passed through): the same results
  // as the f32 values; an id past 2^24 is refused naming the input and the value, before anything
  // compiles or is counted, in both padded and active-extent modes.
  for (bool active : {false, true}) {
    SCOPED_TRACE(active ? "active extent" : "padded");
    auto c = BucketedCompileCache::power_of_two_ladder(Device::Cpu, 4, 8);
    c.set_active_extent(active);
    auto build = [](uint64_t u) {
      Graph g;
      Value x = g.input("x", {static_cast<int64_t>(u), 2});
      Value bias = g.input("bias", {2});
      Value flag = g.input("flag", {1});
      g.output("y", g.mul(g.add(x, bias), flag));
      return g;
    };
    const std::vector<int64_t> x{1, -2, 16777216, -16777216, 5, 6};
    const std::vector<int32_t> bias{100, 200};
    const bool flag[] = {true};
    const CacheRunInput in[] = {{"x", x, size_t{2}}, {"bias", bias, std::nullopt}, {"flag", flag, std::nullopt}};
    const size_t inners[] = {2};
    auto run = c.run_padded_mixed(3, 3, build, in, inners);
    ASSERT_TRUE(run);
    EXPECT_EQ(run->outputs[0], (std::vector<float>{101, 198, 16777316.f, -16777016.f, 105, 206}));
    const CacheStats before = c.stats();
    const std::vector<int64_t> big{1, 2, 3, 16777217};
    const std::vector<int32_t> neg_big{-16777217, 0};
    const CacheRunInput bad[] = {{"x", big, size_t{2}}, {"bias", bias, std::nullopt}, {"flag", flag, std::nullopt}};
    expect_error([&] { c.run_padded_mixed(5, 2, build, bad, inners); }, ErrorCode::InvalidArgument,
                 "run_padded: input 'x' holds 16777217 at index 3, which f32 cannot hold exactly");
    const CacheRunInput bad_bias[] = {{"x", x, size_t{2}}, {"bias", neg_big, std::nullopt}, {"flag", flag, std::nullopt}};
    expect_error([&] { c.run_padded_mixed(3, 3, build, bad_bias, inners); }, ErrorCode::InvalidArgument,
                 "input 'bias' holds -16777217 at index 0");
    const CacheStats after = c.stats();
    EXPECT_EQ(after.runs, before.runs);
    EXPECT_EQ(after.compiles, before.compiles);
    EXPECT_EQ(c.compiled_count(), 1u);  // the bucket of key 5 was never compiled
    // run_padded (every input padded) takes them too (another cache: a bucket keeps its first graph).
    auto c2 = BucketedCompileCache::power_of_two_ladder(Device::Cpu, 4, 8);
    c2.set_active_extent(active);
    const PaddedInput padded[] = {{"x", x, 2}};
    auto only_x = [](uint64_t u) {
      Graph g;
      g.output("y", g.neg(g.input("x", {static_cast<int64_t>(u), 2})));
      return g;
    };
    auto px = c2.run_padded(3, 3, only_x, padded, inners);
    ASSERT_TRUE(px);
    EXPECT_EQ(px->outputs[0], (std::vector<float>{-1, 2, -16777216.f, 16777216.f, -5, -6}));
  }
}

TEST(BucketedCache, StatsCountRowsRunsAndWaste) {
  auto c = BucketedCompileCache::power_of_two_ladder(Device::Reference, 8, 16);
  const size_t inners[] = {2, 0};
  for (size_t actual : {3, 8, 9, 12}) {
    const std::vector<float> x = iota_rows(actual, 2);
    const PaddedInput in[] = {{"x", x, 2}};
    ASSERT_TRUE(c.run_padded(actual, actual, rows_graph, in, inners));
  }
  c.get_or_compile(100, rows_graph);
  CacheStats s = c.stats();
  ASSERT_EQ(s.buckets.size(), 2u);
  EXPECT_EQ(s.buckets[0].range, (Range{1, 9}));
  EXPECT_EQ(s.buckets[0].upper, 8u);
  EXPECT_EQ(s.buckets[0].runs, 2u);
  EXPECT_EQ(s.buckets[0].actual_rows, 11u);
  EXPECT_EQ(s.buckets[0].padded_rows, 16u);
  EXPECT_EQ(s.buckets[0].computed_rows, 16u);
  EXPECT_EQ(s.buckets[0].padded_runs, 2u);
  EXPECT_EQ(s.buckets[0].active_runs, 0u);
  EXPECT_EQ(s.buckets[0].compiles, 1u);
  EXPECT_EQ(s.buckets[0].hits, 1u);
  EXPECT_EQ(s.buckets[1].actual_rows, 21u);
  EXPECT_EQ(s.buckets[1].padded_rows, 32u);
  EXPECT_EQ(s.runs, 4u);
  EXPECT_EQ(s.compiles, 2u);
  EXPECT_EQ(s.out_of_range, 1u);
  EXPECT_DOUBLE_EQ(s.waste(), 48.0 / 32.0);
  EXPECT_GT(s.buckets[0].compile_ms, 0.0);
  EXPECT_GT(s.buckets[0].arena_bytes, 0u);

  auto j = nlohmann::json::parse(s.to_json());
  EXPECT_EQ(j["totals"]["runs"], 4);
  EXPECT_EQ(j["totals"]["padded_rows"], 48);
  EXPECT_EQ(j["totals"]["out_of_range"], 1);
  EXPECT_DOUBLE_EQ(j["totals"]["waste"].get<double>(), 1.5);
  ASSERT_EQ(j["buckets"].size(), 2u);
  EXPECT_EQ(j["buckets"][1]["range"], nlohmann::json::array({9, 17}));
  EXPECT_EQ(j["buckets"][1]["upper"], 16);
  EXPECT_EQ(j["buckets"][1]["actual_rows"], 21);
  EXPECT_EQ(j["buckets"][1]["padded_runs"], 2);
  EXPECT_TRUE(j["buckets"][0].contains("run_ms"));
  EXPECT_TRUE(j["buckets"][0].contains("compile_ms"));
}

TEST(BucketedCache, IsMovable) {
  auto c = BucketedCompileCache::power_of_two_ladder(Device::Reference, 8, 16);
  auto e = c.get_or_compile(3, rows_graph);
  BucketedCompileCache moved = std::move(c);
  auto again = moved.get_or_compile(3, [](uint64_t) -> Graph { throw std::runtime_error("must not build"); });
  ASSERT_TRUE(again);
  EXPECT_EQ(again->graph, e->graph);  // stable pointer survives the move
}

}  // namespace
}  // namespace rungs
