// SPDX-License-Identifier: Apache-2.0
// Ladders: the seed's power-of-two tables, the other builders, optimal vs brute force, waste,
// the trace generator, and every validation error.
#include <gtest/gtest.h>

#include "test_util.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "rungs/error.hpp"
#include "rungs/ladder.hpp"

namespace rungs {
namespace {

using R = std::vector<Range>;

using rungs::testing::expect_error;

std::vector<uint64_t> uppers(const R& r) {
  std::vector<uint64_t> out;
  for (const Range& b : r) out.push_back(b.end - 1);
  return out;
}

TEST(Ladder, PowerOfTwoTablesFromTheSeed) {
  EXPECT_EQ(ladder::power_of_two(8, 256), (R{{1, 9}, {9, 17}, {17, 33}, {33, 65}, {65, 129}, {129, 257}}));
  EXPECT_EQ(ladder::power_of_two(8, 64), (R{{1, 9}, {9, 17}, {17, 33}, {33, 65}}));
  EXPECT_EQ(ladder::power_of_two(10, 64), (R{{1, 17}, {17, 33}, {33, 65}}));
  EXPECT_EQ(ladder::power_of_two(8, 20), (R{{1, 9}, {9, 17}, {17, 33}}));
  EXPECT_EQ(ladder::power_of_two(16, 16), (R{{1, 17}}));
  EXPECT_EQ(ladder::power_of_two(1, 32), (R{{1, 2}, {2, 3}, {3, 5}, {5, 9}, {9, 17}, {17, 33}}));
}

TEST(Ladder, PowerOfTwoValidation) {
  expect_error([] { ladder::power_of_two(0, 8); }, ErrorCode::InvalidArgument, "min must be >= 1");
  expect_error([] { ladder::power_of_two(16, 8); }, ErrorCode::InvalidArgument, "max");
}

TEST(Ladder, PowerOfTwoStopsAt2To63) {
  const uint64_t two63 = uint64_t{1} << 63;
  R r = ladder::power_of_two(two63 / 2, two63);  // extents 2^62, 2^63: allowed
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r.back().end - 1, two63);
  expect_error([&] { ladder::power_of_two(1, two63 + 1); }, ErrorCode::OutOfRange, "2^63");
  expect_error([&] { ladder::power_of_two(two63 + 1, two63 + 2); }, ErrorCode::OutOfRange, "2^63");
  expect_error([&] { ladder::power_of_two(1, std::numeric_limits<uint64_t>::max()); }, ErrorCode::OutOfRange, "2^63");
}

TEST(Ladder, HeadBuckets) {
  EXPECT_EQ(ladder::power_of_two(8, 64, /*head=*/true),
            (R{{1, 2}, {2, 3}, {3, 5}, {5, 9}, {9, 17}, {17, 33}, {33, 65}}));
  // A first extent inside the head is dropped, a partly covered one starts after the head.
  EXPECT_EQ(ladder::with_head(ladder::from_extents({2, 6, 10})), (R{{1, 2}, {2, 3}, {3, 5}, {5, 7}, {7, 11}}));
  const uint64_t custom[] = {1, 3};
  EXPECT_EQ(ladder::with_head(ladder::power_of_two(8, 16), custom), (R{{1, 2}, {2, 4}, {4, 9}, {9, 17}}));
  expect_error([] { ladder::with_head(R{{2, 9}}); }, ErrorCode::InvalidArgument, "start at key 1");
  const uint64_t bad[] = {2, 2};
  expect_error([&] { ladder::with_head(ladder::power_of_two(8, 16), bad); }, ErrorCode::InvalidArgument,
               "strictly increasing");
}

TEST(Ladder, Geometric) {
  EXPECT_EQ(uppers(ladder::geometric(8, 100, 2.0)), (std::vector<uint64_t>{8, 16, 32, 64, 100}));
  EXPECT_EQ(ladder::geometric(8, 256, 2.0), ladder::power_of_two(8, 256));
  // A ratio that would not grow a small extent still steps by at least one.
  EXPECT_EQ(uppers(ladder::geometric(1, 4, 1.1)), (std::vector<uint64_t>{1, 2, 3, 4}));
  EXPECT_EQ(uppers(ladder::geometric(10, 40, 1.5)), (std::vector<uint64_t>{10, 15, 23, 35, 40}));
  expect_error([] { ladder::geometric(8, 64, 1.0); }, ErrorCode::InvalidArgument, "ratio");
  expect_error([] { ladder::geometric(0, 64, 2.0); }, ErrorCode::InvalidArgument, "min must be >= 1");
  expect_error([] { ladder::geometric(8, 4, 2.0); }, ErrorCode::InvalidArgument, "max");
}

TEST(Ladder, Linear) {
  EXPECT_EQ(ladder::linear(8, 40, 16), (R{{1, 9}, {9, 25}, {25, 41}}));
  EXPECT_EQ(uppers(ladder::linear(8, 30, 16)), (std::vector<uint64_t>{8, 24, 30}));
  EXPECT_EQ(uppers(ladder::linear(5, 5, 3)), (std::vector<uint64_t>{5}));
  EXPECT_EQ(uppers(ladder::linear(8, 16, 8, true)), (std::vector<uint64_t>{1, 2, 4, 8, 16}));
  expect_error([] { ladder::linear(8, 64, 0); }, ErrorCode::InvalidArgument, "step");
}

TEST(Ladder, FromExtents) {
  EXPECT_EQ(ladder::from_extents({8, 24, 64}), (R{{1, 9}, {9, 25}, {25, 65}}));
  EXPECT_EQ(ladder::from_extents({1}), (R{{1, 2}}));
  expect_error([] { ladder::from_extents(std::vector<uint64_t>{}); }, ErrorCode::InvalidArgument, "at least 1");
  expect_error([] { ladder::from_extents({8, 8}); }, ErrorCode::InvalidArgument, "strictly increasing");
  expect_error([] { ladder::from_extents({0, 8}); }, ErrorCode::InvalidArgument, "extents[0]");
}

TEST(Ladder, ValidateMessagesInOrder) {
  expect_error([] { ladder::validate(R{}); }, ErrorCode::InvalidArgument, "at least 1 bucket");
  expect_error([] { ladder::validate(R{{1, 9}, {9, 9}}); }, ErrorCode::InvalidArgument, "empty");
  expect_error([] { ladder::validate(R{{5, 3}}); }, ErrorCode::InvalidArgument, "empty");
  expect_error([] { ladder::validate(R{{1, 9}, {8, 17}}); }, ErrorCode::InvalidArgument, "overlap");
  expect_error([] { ladder::validate(R{{9, 17}, {1, 9}}); }, ErrorCode::InvalidArgument, "overlap");
  // Empty is checked before overlap: an unsorted list with an empty bucket reports "empty".
  expect_error([] { ladder::validate(R{{9, 17}, {1, 1}}); }, ErrorCode::InvalidArgument, "empty");
  ladder::validate(R{{0, 1}, {1, 9}, {20, 30}});  // touching and gaps are fine
}

TEST(Ladder, ExpectedWaste) {
  const R pow2 = ladder::power_of_two(8, 256);
  const std::vector<uint64_t> keys{8, 9, 17, 256};
  EXPECT_EQ(ladder::padded_rows(pow2, keys), 8u + 16u + 32u + 256u);
  EXPECT_DOUBLE_EQ(ladder::expected_waste(pow2, keys), (8.0 + 16 + 32 + 256) / (8.0 + 9 + 17 + 256));
  const std::vector<uint64_t> exact{8, 16};
  EXPECT_DOUBLE_EQ(ladder::expected_waste(pow2, exact), 1.0);
  const std::vector<uint64_t> outside{300};
  expect_error([&] { ladder::expected_waste(pow2, outside); }, ErrorCode::InvalidArgument, "key 300");
  expect_error([&] { ladder::expected_waste(pow2, std::vector<uint64_t>{}); }, ErrorCode::InvalidArgument,
               "observed_keys");
}

// The least total padded rows over every ladder of at most `b` buckets covering [1, max key]
// whose extents are any values in [1, max key] (not only observed keys).
uint64_t brute_force_best(const std::vector<uint64_t>& keys, size_t b) {
  const uint64_t top = *std::max_element(keys.begin(), keys.end());
  uint64_t best = std::numeric_limits<uint64_t>::max();
  // Bit i of mask set: extent i+1 is in the ladder (top always is).
  for (uint64_t mask = 0; mask < (uint64_t{1} << (top - 1)); ++mask) {
    std::vector<uint64_t> extents;
    for (uint64_t i = 0; i + 1 < top; ++i)
      if (mask >> i & 1) extents.push_back(i + 1);
    extents.push_back(top);
    if (extents.size() > b) continue;
    uint64_t cost = 0;
    for (uint64_t k : keys) cost += *std::lower_bound(extents.begin(), extents.end(), k);
    best = std::min(best, cost);
  }
  return best;
}

TEST(Ladder, OptimalMatchesBruteForce) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const uint64_t top = 1 + rng() % 12;
    const size_t n = 1 + rng() % 10;
    std::vector<uint64_t> keys;
    for (size_t i = 0; i < n; ++i) keys.push_back(1 + rng() % top);
    const size_t b = 1 + rng() % 4;
    const R ladder = ladder::optimal(keys, b);
    const uint64_t max_key = *std::max_element(keys.begin(), keys.end());
    ASSERT_LE(ladder.size(), b);
    ASSERT_EQ(ladder.front().start, 1u);
    ASSERT_EQ(ladder.back().end, max_key + 1);
    for (size_t i = 0; i + 1 < ladder.size(); ++i) ASSERT_EQ(ladder[i].end, ladder[i + 1].start);  // no gaps
    EXPECT_EQ(ladder::padded_rows(ladder, keys), brute_force_best(keys, b)) << "trial " << trial;
  }
}

TEST(Ladder, OptimalSmallCases) {
  // Fewer distinct keys than buckets: one bucket per key, no waste.
  const std::vector<uint64_t> keys{3, 3, 10, 7};
  EXPECT_EQ(ladder::optimal(keys, 8), (R{{1, 4}, {4, 8}, {8, 11}}));
  EXPECT_DOUBLE_EQ(ladder::expected_waste(ladder::optimal(keys, 8), keys), 1.0);
  // One bucket: everything runs at the max key.
  EXPECT_EQ(ladder::optimal(keys, 1), (R{{1, 11}}));
  // Two buckets: {3,3,7 | 10} costs 7*3+10 = 31, {3,3 | 7,10} costs 6+20 = 26.
  EXPECT_EQ(ladder::optimal(keys, 2), (R{{1, 4}, {4, 11}}));
  // Key 0 starts the ladder at 0.
  const std::vector<uint64_t> zero{0, 5};
  EXPECT_EQ(ladder::optimal(zero, 2), (R{{0, 1}, {1, 6}}));
  expect_error([] { ladder::optimal(std::vector<uint64_t>{}, 3); }, ErrorCode::InvalidArgument, "observed_keys");
  expect_error([&] { ladder::optimal(keys, 0); }, ErrorCode::InvalidArgument, "max_buckets");
}

TEST(Ladder, OptimalBeatsPowerOfTwoOnATrace) {
  const std::vector<uint64_t> trace = ladder::lognormal_trace(24, 2000, 256, 1);
  const R opt = ladder::optimal(trace, 6);
  EXPECT_LE(opt.size(), 6u);
  EXPECT_LT(ladder::expected_waste(opt, trace), ladder::expected_waste(ladder::power_of_two(8, 256), trace));
}

TEST(Ladder, LognormalTrace) {
  const std::vector<uint64_t> a = ladder::lognormal_trace(24, 2000, 256, 42);
  const std::vector<uint64_t> b = ladder::lognormal_trace(24, 2000, 256, 42);
  const std::vector<uint64_t> c = ladder::lognormal_trace(24, 2000, 256, 43);
  ASSERT_EQ(a.size(), 2000u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_GE(*std::min_element(a.begin(), a.end()), 1u);
  EXPECT_LE(*std::max_element(a.begin(), a.end()), 256u);
  std::vector<uint64_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  const uint64_t median = sorted[sorted.size() / 2];
  EXPECT_GE(median, 21u);
  EXPECT_LE(median, 27u);
  // Lengths past max are clipped to it: a huge median gives max every time.
  const std::vector<uint64_t> big = ladder::lognormal_trace(1e6, 10, 256, 1);
  EXPECT_EQ(big, std::vector<uint64_t>(10, 256));
  expect_error([] { ladder::lognormal_trace(0, 10, 256, 1); }, ErrorCode::InvalidArgument, "median");
  expect_error([] { ladder::lognormal_trace(24, 10, 0, 1); }, ErrorCode::InvalidArgument, "max");
}

}  // namespace
}  // namespace rungs
