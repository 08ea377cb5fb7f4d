// SPDX-License-Identifier: Apache-2.0
// Ladder builders, validation, the optimal-ladder DP and the waste score (rungs/ladder.hpp).
#include "rungs/ladder.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/check.hpp"

namespace rungs::ladder {
namespace {

constexpr uint64_t kMaxExtent = uint64_t{1} << 63;  // an extent past this is Error(OutOfRange)

std::string range_text(const Range& r) {
  return "[" + std::to_string(r.start) + ", " + std::to_string(r.end) + ")";
}

void check_extent(uint64_t extent, const char* who) {
  if (extent > kMaxExtent)
    fail(ErrorCode::OutOfRange, std::string(who) + ": extent " + std::to_string(extent) +
                                    " would pass 2^63; use a smaller max");
}

void check_min_max(uint64_t min, uint64_t max, const char* who) {
  if (min < 1) fail(ErrorCode::InvalidArgument, std::string(who) + ": min must be >= 1 (got 0)");
  if (max < min)
    fail(ErrorCode::InvalidArgument, std::string(who) + ": max (" + std::to_string(max) +
                                         ") must be >= min (" + std::to_string(min) + ")");
}

// Buckets [1, e0+1), [e0+1, e1+1), ... for strictly increasing extents (already checked).
std::vector<Range> ranges_from(const std::vector<uint64_t>& extents, uint64_t first_start) {
  std::vector<Range> out;
  out.reserve(extents.size());
  uint64_t start = first_start;
  for (uint64_t e : extents) {
    out.push_back({start, e + 1});
    start = e + 1;
  }
  return out;
}

std::vector<Range> maybe_head(std::vector<Range> ladder, bool head) {
  return head ? with_head(ladder) : ladder;
}

}  // namespace

void validate(std::span<const Range> buckets, const char* who) {
  if (buckets.empty())
    fail(ErrorCode::InvalidArgument, std::string(who) + ": needs at least 1 bucket (the list is empty)");
  for (size_t i = 0; i < buckets.size(); ++i) {
    if (buckets[i].start >= buckets[i].end)
      fail(ErrorCode::InvalidArgument, std::string(who) + ": bucket " + std::to_string(i) + " " +
                                           range_text(buckets[i]) + " is empty (start must be < end)");
  }
  for (size_t i = 0; i + 1 < buckets.size(); ++i) {
    if (buckets[i].end > buckets[i + 1].start)
      fail(ErrorCode::InvalidArgument,
           std::string(who) + ": bucket " + std::to_string(i) + " " + range_text(buckets[i]) +
               " and bucket " + std::to_string(i + 1) + " " + range_text(buckets[i + 1]) +
               " overlap (buckets must be sorted and disjoint; touching is fine)");
  }
}

std::vector<Range> power_of_two(uint64_t min, uint64_t max, bool head) {
  const char* who = "power_of_two_ladder";
  check_min_max(min, max, who);
  check_extent(min, who);
  uint64_t e = 1;
  while (e < min) e <<= 1;  // min <= 2^63, so this stops at <= 2^63
  std::vector<uint64_t> extents{e};
  while (e < max) {
    if (e >= kMaxExtent) check_extent(max, who);  // doubling would pass 2^63
    e <<= 1;
    extents.push_back(e);
  }
  return maybe_head(ranges_from(extents, 1), head);
}

std::vector<Range> geometric(uint64_t min, uint64_t max, double ratio, bool head) {
  const char* who = "ladder::geometric";
  check_min_max(min, max, who);
  check_extent(max, who);
  if (!(ratio > 1.0) || !std::isfinite(ratio))
    fail(ErrorCode::InvalidArgument, std::string(who) + ": ratio must be a finite number > 1 (got " +
                                         std::to_string(ratio) + ")");
  std::vector<uint64_t> extents{min};
  uint64_t e = min;
  while (e < max) {
    long double next = std::ceil(static_cast<long double>(e) * ratio);
    uint64_t n = next >= static_cast<long double>(max) ? max : static_cast<uint64_t>(next);
    e = std::max(n, e + 1);
    extents.push_back(e);
  }
  return maybe_head(ranges_from(extents, 1), head);
}

std::vector<Range> linear(uint64_t min, uint64_t max, uint64_t step, bool head) {
  const char* who = "ladder::linear";
  check_min_max(min, max, who);
  check_extent(max, who);
  if (step < 1) fail(ErrorCode::InvalidArgument, std::string(who) + ": step must be >= 1 (got 0)");
  std::vector<uint64_t> extents{min};
  uint64_t e = min;
  while (e < max) {
    e = (max - e <= step) ? max : e + step;
    extents.push_back(e);
  }
  return maybe_head(ranges_from(extents, 1), head);
}

std::vector<Range> from_extents(std::span<const uint64_t> extents, bool head) {
  const char* who = "ladder::from_extents";
  if (extents.empty())
    fail(ErrorCode::InvalidArgument, std::string(who) + ": extents needs at least 1 extent (got none)");
  for (size_t i = 0; i < extents.size(); ++i) {
    if (extents[i] < 1)
      fail(ErrorCode::InvalidArgument, std::string(who) + ": extents[" + std::to_string(i) + "] is 0; extents must be >= 1");
    check_extent(extents[i], who);
    if (i > 0 && extents[i] <= extents[i - 1])
      fail(ErrorCode::InvalidArgument, std::string(who) + ": extents must be strictly increasing (extents[" +
                                           std::to_string(i) + "] = " + std::to_string(extents[i]) +
                                           " after " + std::to_string(extents[i - 1]) + ")");
  }
  return maybe_head(ranges_from(std::vector<uint64_t>(extents.begin(), extents.end()), 1), head);
}

std::vector<Range> from_extents(std::initializer_list<uint64_t> extents, bool head) {
  return from_extents(std::span<const uint64_t>(extents.begin(), extents.size()), head);
}

std::vector<Range> with_head(std::span<const Range> ladder, std::span<const uint64_t> head) {
  const char* who = "ladder::with_head";
  validate(ladder, who);
  if (ladder.front().start != 1)
    fail(ErrorCode::InvalidArgument, std::string(who) + ": the ladder must start at key 1 (it starts at " +
                                         std::to_string(ladder.front().start) + ")");
  if (head.empty()) return std::vector<Range>(ladder.begin(), ladder.end());
  for (size_t i = 0; i < head.size(); ++i) {
    if (head[i] < 1 || (i > 0 && head[i] <= head[i - 1]))
      fail(ErrorCode::InvalidArgument, std::string(who) + ": head extents must be >= 1 and strictly increasing (head[" +
                                           std::to_string(i) + "] = " + std::to_string(head[i]) + ")");
    check_extent(head[i], who);
  }
  std::vector<Range> out = ranges_from(std::vector<uint64_t>(head.begin(), head.end()), 1);
  const uint64_t covered_end = head.back() + 1;  // keys below this are in the head
  for (const Range& r : ladder) {
    if (r.end <= covered_end) continue;  // its extent is covered by the head
    out.push_back({std::max(r.start, covered_end), r.end});
  }
  return out;
}

std::vector<Range> optimal(std::span<const uint64_t> observed_keys, size_t max_buckets) {
  const char* who = "ladder::optimal";
  if (observed_keys.empty())
    fail(ErrorCode::InvalidArgument, std::string(who) + ": observed_keys must not be empty");
  if (max_buckets < 1) fail(ErrorCode::InvalidArgument, std::string(who) + ": max_buckets must be >= 1 (got 0)");

  std::vector<uint64_t> sorted(observed_keys.begin(), observed_keys.end());
  std::sort(sorted.begin(), sorted.end());
  check_extent(sorted.back(), who);
  std::vector<uint64_t> key;    // distinct keys, increasing
  std::vector<uint64_t> count;  // how often each was observed
  for (uint64_t k : sorted) {
    if (!key.empty() && key.back() == k) {
      ++count.back();
    } else {
      key.push_back(k);
      count.push_back(1);
    }
  }
  const size_t n = key.size();
  const size_t b_max = std::min(max_buckets, n);
  // prefix[i] = observations of key[0 .. i-1]
  std::vector<uint64_t> prefix(n + 1, 0);
  for (size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + count[i];

  // cost[b][i]: least padded rows of keys 0..i with b+1 buckets, the last one ending at key[i].
  // from[b][i]: the first key index of that last bucket. A cost is at most 2^63 * count, past
  // uint64_t, so the sums are 128-bit.
  __extension__ typedef unsigned __int128 u128;
  const u128 inf = ~u128{0};
  std::vector<std::vector<u128>> cost(b_max, std::vector<u128>(n, inf));
  std::vector<std::vector<size_t>> from(b_max, std::vector<size_t>(n, 0));
  for (size_t i = 0; i < n; ++i) cost[0][i] = u128{key[i]} * prefix[i + 1];
  for (size_t b = 1; b < b_max; ++b) {
    for (size_t i = b; i < n; ++i) {
      for (size_t j = b; j <= i; ++j) {  // last bucket holds keys j..i
        u128 c = cost[b - 1][j - 1] + u128{key[i]} * (prefix[i + 1] - prefix[j]);
        if (c < cost[b][i]) {
          cost[b][i] = c;
          from[b][i] = j;
        }
      }
    }
  }
  size_t best_b = 0;
  for (size_t b = 1; b < b_max; ++b)
    if (cost[b][n - 1] < cost[best_b][n - 1]) best_b = b;  // strict: fewest buckets on ties

  std::vector<uint64_t> extents;
  for (size_t b = best_b + 1, i = n - 1; b-- > 0;) {
    extents.push_back(key[i]);
    if (b > 0) i = from[b][i] - 1;
  }
  std::reverse(extents.begin(), extents.end());
  return ranges_from(extents, key.front() == 0 ? 0 : 1);
}

uint64_t padded_rows(std::span<const Range> buckets, std::span<const uint64_t> observed_keys) {
  validate(buckets, "ladder::expected_waste");
  uint64_t padded = 0;
  for (uint64_t k : observed_keys) {
    auto it = std::upper_bound(buckets.begin(), buckets.end(), k,
                               [](uint64_t key, const Range& r) { return key < r.start; });
    if (it == buckets.begin() || k >= std::prev(it)->end)
      fail(ErrorCode::InvalidArgument, "ladder::expected_waste: observed key " + std::to_string(k) +
                                           " is outside every bucket");
    padded += std::prev(it)->end - 1;
  }
  return padded;
}

double expected_waste(std::span<const Range> buckets, std::span<const uint64_t> observed_keys) {
  if (observed_keys.empty())
    fail(ErrorCode::InvalidArgument, "ladder::expected_waste: observed_keys must not be empty");
  const uint64_t padded = padded_rows(buckets, observed_keys);
  long double actual = 0;
  for (uint64_t k : observed_keys) actual += static_cast<long double>(k);
  if (actual == 0) return padded == 0 ? 1.0 : std::numeric_limits<double>::infinity();
  return static_cast<double>(static_cast<long double>(padded) / actual);
}

}  // namespace rungs::ladder
