// SPDX-License-Identifier: Apache-2.0
// The encoder-like model through the cache: bucketed runs (padded and active extent) match
// exact-shape compiles for sampled lengths 1..256 (mask, mean pooling and slicing all right),
// active extent really skips the padded rows, unsupported graphs fall back, and a ladder holds
// the weights once.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "rungs/cache.hpp"
#include "test_models.hpp"

namespace rungs {
namespace {

using testing::EncoderConfig;

// Small enough to run every sampled length quickly, same structure as the bundled encoder.
const EncoderConfig kSmall{/*vocab=*/100, /*dim=*/32, /*heads=*/2, /*hidden=*/64, /*layers=*/2};
constexpr size_t kTokens = 0, kEmbedding = 1;  // make_encoder's outputs, in order
const std::vector<uint64_t> kLengths{1, 2, 7, 8, 9, 16, 17, 31, 33, 64, 65, 100, 128, 129, 200, 255, 256};

float max_abs(const std::vector<float>& v) {
  float m = 0;
  for (float x : v) m = std::max(m, std::fabs(x));
  return m;
}

// max |a - b| <= tol * max(1, max |b|), with a message naming the first bad element.
::testing::AssertionResult close(const std::vector<float>& a, const std::vector<float>& b, float tol) {
  if (a.size() != b.size())
    return ::testing::AssertionFailure() << "sizes differ: " << a.size() << " vs " << b.size();
  const float bound = tol * std::max(1.0f, max_abs(b));
  for (size_t i = 0; i < a.size(); ++i)
    if (!(std::fabs(a[i] - b[i]) <= bound))
      return ::testing::AssertionFailure() << "element " << i << ": " << a[i] << " vs " << b[i] << " (bound " << bound
                                           << ")";
  return ::testing::AssertionSuccess();
}

// The same params for every bucket (the seed does not depend on the extent).
auto small_build = [](uint64_t upper) {
  HirModule m = testing::make_encoder(static_cast<int64_t>(upper), kSmall);
  ParamMap p = testing::random_params(m, 11);
  return std::pair<HirModule, ParamMap>(std::move(m), std::move(p));
};

struct Request {
  std::vector<float> ids, mask;
};
Request request(uint64_t len) {
  auto [ids, mask] = testing::encoder_inputs(static_cast<int64_t>(len), static_cast<int64_t>(len), kSmall.vocab,
                                             static_cast<uint32_t>(len));
  return {ids, mask};
}

// Exact-shape reference: the model compiled at the request's own length, no padding.
std::vector<std::vector<float>> exact_run(CompileCache& exact, uint64_t len) {
  auto g = exact.get_or_compile(len, small_build);
  const Request r = request(len);
  const NamedInput in[] = {{"ids", r.ids}, {"mask", r.mask}};
  return g->run(in);
}

std::optional<PaddedRun> bucketed_run(BucketedCompileCache& c, uint64_t len, bool unsliced_hidden = false) {
  const Request r = request(len);
  const PaddedInput in[] = {{"ids", r.ids, 1}, {"mask", r.mask, 1}};
  const size_t inners[] = {unsliced_hidden ? size_t{0} : static_cast<size_t>(kSmall.dim), 0};  // tokens, embedding
  return c.run_padded(len, len, small_build, in, inners);
}

TEST(EncoderCache, PaddedAndActiveBucketsMatchExactShapeCompiles) {
  CompileCache exact(Device::Cpu);
  auto padded = BucketedCompileCache::power_of_two_ladder(Device::Cpu, 8, 256);
  auto active = BucketedCompileCache::power_of_two_ladder(Device::Cpu, 8, 256);
  active.set_active_extent(true);
  for (uint64_t len : kLengths) {
    SCOPED_TRACE("length " + std::to_string(len));
    const auto want = exact_run(exact, len);
    auto p = bucketed_run(padded, len);
    auto a = bucketed_run(active, len);
    ASSERT_TRUE(p && a);
    ASSERT_EQ(p->outputs.size(), 2u);
    EXPECT_EQ(p->outputs[kTokens].size(), len * static_cast<size_t>(kSmall.dim));  // sliced
    EXPECT_EQ(p->outputs[kEmbedding].size(), static_cast<size_t>(kSmall.dim));     // unsliced
    EXPECT_TRUE(close(p->outputs[kTokens], want[kTokens], 1e-4f));
    EXPECT_TRUE(close(p->outputs[kEmbedding], want[kEmbedding], 1e-4f));
    // Active extent equals the padded run's real rows (1e-5 relative).
    EXPECT_TRUE(close(a->outputs[kTokens], p->outputs[kTokens], 1e-5f));
    EXPECT_TRUE(close(a->outputs[kEmbedding], p->outputs[kEmbedding], 1e-5f));
  }
  EXPECT_EQ(padded.compiled_count(), 6u);
  EXPECT_EQ(active.compiled_count(), 6u);
}

uint64_t ps_elements(const BucketedCompileCache& c) { return c.stats().elements_computed; }

TEST(EncoderCache, ActiveExtentSkipsThePaddedRows) {
  auto padded = BucketedCompileCache::power_of_two_ladder(Device::Cpu, 8, 64);
  auto active = BucketedCompileCache::power_of_two_ladder(Device::Cpu, 8, 64);
  active.set_active_extent(true);
  uint64_t actual = 0, uppers = 0;
  for (uint64_t len : {3, 9, 20, 40}) {
    SCOPED_TRACE("length " + std::to_string(len));
    auto p = bucketed_run(padded, len, /*unsliced_hidden=*/true);
    auto a = bucketed_run(active, len, /*unsliced_hidden=*/true);
    ASSERT_TRUE(p && a);
    EXPECT_EQ(p->mode, RunMode::Padded);
    EXPECT_EQ(a->mode, RunMode::Active);
    const size_t d = static_cast<size_t>(kSmall.dim);
    const std::vector<float>& pt = p->outputs[kTokens];
    const std::vector<float>& at = a->outputs[kTokens];
    ASSERT_EQ(at.size(), pt.size());  // unsliced: both at the compiled extent
    // Real rows agree ...
    EXPECT_TRUE(close(std::vector<float>(at.begin(), at.begin() + len * d),
                      std::vector<float>(pt.begin(), pt.begin() + len * d), 1e-5f));
    // ... but the padded run computed its tail rows (layer norm of pad tokens is not zero) while
    // the active run never produced them: its tail is the untouched zero fill.
    if (len < a->upper) {
      EXPECT_GT(max_abs(std::vector<float>(pt.begin() + len * d, pt.end())), 0.0f);
      EXPECT_EQ(max_abs(std::vector<float>(at.begin() + len * d, at.end())), 0.0f);
    }
    // The executor's own work counter: the active graph wrote fewer elements than the padded one.
    const auto* pg = padded.get_or_compile(len, small_build)->graph;
    const auto* ag = active.get_or_compile(len, small_build)->graph;
    EXPECT_LT(ag->elements_computed(), pg->elements_computed());
    actual += len;
    uppers += a->upper;
  }
  const CacheStats s = active.stats();
  EXPECT_EQ(s.active_runs, 4u);
  EXPECT_EQ(s.padded_runs, 0u);
  EXPECT_EQ(s.actual_rows, actual);
  EXPECT_EQ(s.padded_rows, uppers);
  EXPECT_EQ(s.computed_rows, actual);  // padding cost no rows
  EXPECT_DOUBLE_EQ(s.compute_waste(), 1.0);
  EXPECT_LT(s.elements_computed, ps_elements(padded));
  for (const BucketStats& b : s.buckets)
    if (b.compiled) EXPECT_EQ(b.active_supported, std::optional<bool>(true)) << b.active_reason;
  const CacheStats ps = padded.stats();
  EXPECT_EQ(ps.padded_runs, 4u);
  EXPECT_EQ(ps.elements_computed, ps_elements(padded));
  EXPECT_EQ(ps.computed_rows, uppers);
}

TEST(EncoderCache, ActiveExtentIsExactWherePaddingIsNot) {
  // y = x - mean over rows: every row depends on every other, so padded rows change the result.
  // With active extent the mean is over the real rows (the graph as if compiled at 3 rows), and
  // the stats say the bucket differs from padding; without it the padded mean is what comes out.
  auto build = [](uint64_t u) {
    Graph g;
    Value x = g.input("x", {static_cast<int64_t>(u), 2});
    g.output("y", g.sub(x, g.mean(x, {0}, true)));
    return g;
  };
  const std::vector<float> x{1, 2, 3, 4, 5, 6};  // 3 rows, upper 4
  const PaddedInput in[] = {{"x", x, 2}};
  const size_t inners[] = {2};
  for (bool active : {false, true}) {
    auto c = BucketedCompileCache::power_of_two_ladder(Device::Cpu, 4, 8);
    c.set_active_extent(active);
    auto r = c.run_padded(3, 3, build, in, inners);
    ASSERT_TRUE(r);
    const CacheStats s = c.stats();
    if (active) {
      // Exact mean over 3 rows: 3, 4.
      EXPECT_TRUE(close(r->outputs[0], {-2, -2, 0, 0, 2, 2}, 1e-6f));
      EXPECT_EQ(s.active_runs, 1u);
      EXPECT_EQ(s.buckets[0].active_supported, std::optional<bool>(true));
      EXPECT_NE(s.buckets[0].active_differs_from_padding.find("mean over rows"), std::string::npos)
          << s.buckets[0].active_differs_from_padding;
      EXPECT_NE(s.to_json().find("active_differs_from_padding"), std::string::npos);
    } else {
      // Padded mean over 4 rows: (1+3+5+0)/4 = 2.25, (2+4+6+0)/4 = 3.
      EXPECT_TRUE(close(r->outputs[0], {-1.25f, -1, 0.75f, 1, 2.75f, 3}, 1e-6f));
      EXPECT_EQ(s.padded_runs, 1u);
      EXPECT_EQ(s.buckets[0].active_supported, std::nullopt);
    }
  }
}

TEST(EncoderCache, ActiveExtentFallsBackWhenTheAnalysisRefuses) {
  // A sum over rows of exp(x): exp(0) = 1 in padded rows, and nothing tells a compiled divisor
  // from another constant, so the analysis refuses and the cache pads.
  auto build = [](uint64_t u) {
    Graph g;
    Value x = g.input("x", {static_cast<int64_t>(u), 2});
    g.output("y", g.sub(x, g.sum(g.exp(x), {0}, true)));
    return g;
  };
  auto c = BucketedCompileCache::power_of_two_ladder(Device::Cpu, 4, 8);
  c.set_active_extent(true);
  const std::vector<float> x{0, 0, 0, 0, 0, 0};  // 3 rows, upper 4
  const PaddedInput in[] = {{"x", x, 2}};
  const size_t inners[] = {2};
  auto r = c.run_padded(3, 3, build, in, inners);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->mode, RunMode::Padded);                                 // active extent on, but refused for this graph
  EXPECT_TRUE(close(r->outputs[0], {-4, -4, -4, -4, -4, -4}, 1e-6f));  // 4 rows of exp(0)
  const CacheStats s = c.stats();
  EXPECT_EQ(s.padded_runs, 1u);
  EXPECT_EQ(s.active_runs, 0u);
  EXPECT_EQ(s.buckets[0].active_supported, std::optional<bool>(false));
  EXPECT_NE(s.buckets[0].active_reason.find("not zero in padded rows"), std::string::npos) << s.buckets[0].active_reason;
}

TEST(EncoderCache, ActiveExtentSwitchedOnAfterCompilePreparesLazily) {
  auto c = BucketedCompileCache::power_of_two_ladder(Device::Cpu, 8, 16);
  const auto first = bucketed_run(c, 5);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->mode, RunMode::Padded);
  EXPECT_EQ(c.stats().buckets[0].active_supported, std::nullopt);
  c.set_active_extent(true);
  const auto second = bucketed_run(c, 6);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->mode, RunMode::Active);
  const CacheStats s = c.stats();
  EXPECT_EQ(s.buckets[0].padded_runs, 1u);
  EXPECT_EQ(s.buckets[0].active_runs, 1u);
  EXPECT_EQ(s.buckets[0].compiles, 1u);
}

TEST(EncoderCache, LadderHoldsTheWeightsOnce) {
  auto c = BucketedCompileCache::power_of_two_ladder(Device::Cpu, 8, 256);
  ASSERT_EQ(c.total_buckets(), 6u);
  size_t one_graph = 0;
  for (uint64_t key : {8, 16, 32, 64, 128, 256}) {
    auto e = c.ensure_hir_with_params(key, small_build, CompileOptions{});
    ASSERT_TRUE(e);
    one_graph = std::max(one_graph, e->graph->report().param_bytes);
  }
  const CacheStats s = c.stats();
  ASSERT_GT(one_graph, 0u);
  // Every bucket reports its own view of the weights ...
  EXPECT_GE(s.param_bytes_summed, 6 * one_graph * 9 / 10);
  // ... but memory holds them once: about 1x, not 6x.
  EXPECT_LE(s.weight_bytes, one_graph * 11 / 10) << "weight_bytes " << s.weight_bytes << ", one graph's params "
                                                 << one_graph << ", summed " << s.param_bytes_summed;
}

}  // namespace
}  // namespace rungs
