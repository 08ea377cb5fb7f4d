// SPDX-License-Identifier: Apache-2.0
// rungs/ladder.hpp: bucket ladders for BucketedCompileCache ("compile at max, run at less").
//
// A ladder is a sorted list of half-open key ranges [start, end); the bucket compiles at
// upper = end - 1 and every key in it runs at that extent. The functions here build ladders that
// cover [1, max]; ladder::optimal fits one to observed request lengths, ladder::expected_waste
// scores one, and ladder::lognormal_trace makes a reproducible trace of request lengths.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

namespace rungs {

struct Range {  // half-open [start, end)
  uint64_t start;
  uint64_t end;
  friend bool operator==(const Range&, const Range&) = default;
};

namespace ladder {

// The small head buckets {1, 2, 4}: with them the first bucket of a ladder no longer runs key 1
// at extent `min` (up to min x waste).
inline constexpr uint64_t kHead[] = {1, 2, 4};

// Checks a bucket list as BucketedCompileCache does (Error(InvalidArgument)): at least 1 bucket,
// no empty bucket (start >= end), no overlap (b[i].end > b[i+1].start; unsorted fails the same).
// `who` starts the message, e.g. "BucketedCompileCache".
void validate(std::span<const Range> buckets, const char* who = "ladder");

// The seed's power-of-two ladder over [1, max]: first extent e = next_pow2(min), first bucket
// [1, e+1), then [e+1, 2e+1), doubling until the extent is >= max. (8, 256) gives 1..9, 9..17,
// 17..33, 33..65, 65..129, 129..257. min >= 1 and max >= min, else Error(InvalidArgument); an
// extent past 2^63 is Error(OutOfRange). With head = true the {1, 2, 4} buckets come first.
std::vector<Range> power_of_two(uint64_t min, uint64_t max, bool head = false);

// Extents min, then each the previous times `ratio` (rounded up, at least +1), the last one
// clipped to exactly max: geometric(8, 100, 2) has extents 8, 16, 32, 64, 100. ratio > 1.
std::vector<Range> geometric(uint64_t min, uint64_t max, double ratio, bool head = false);

// Extents min, min+step, min+2*step, ..., the last one clipped to exactly max. step >= 1.
std::vector<Range> linear(uint64_t min, uint64_t max, uint64_t step, bool head = false);

// One bucket per extent, strictly increasing and >= 1: {8, 24, 64} gives 1..9, 9..25, 25..65.
std::vector<Range> from_extents(std::span<const uint64_t> extents, bool head = false);
std::vector<Range> from_extents(std::initializer_list<uint64_t> extents, bool head = false);

// Puts buckets for the extents in `head` (default {1, 2, 4}, strictly increasing) in front of a
// ladder that starts at 1: ladder buckets whose extent is covered by the head are dropped and the
// next one starts after the last head extent. with_head(power_of_two(8, 64)) is 1..2, 2..3, 3..5,
// 5..9, 9..17, 17..33, 33..65.
std::vector<Range> with_head(std::span<const Range> ladder, std::span<const uint64_t> head = kHead);

// The ladder covering [1, max key] (from 0 when a key is 0) that minimises the total padded rows
// sum over observed keys of the extent of the key's bucket, with at most max_buckets buckets.
// Exact: dynamic programming over the distinct keys (an optimal extent is always an observed
// key), O(max_buckets * distinct^2). Among equally good ladders it returns one with the fewest
// buckets. observed_keys must not be empty and max_buckets >= 1 (Error(InvalidArgument)).
std::vector<Range> optimal(std::span<const uint64_t> observed_keys, size_t max_buckets);

// Total padded rows / total actual rows of the observed keys run through `buckets` (1.0 = no
// padding). A key outside every bucket is Error(InvalidArgument) naming it.
double expected_waste(std::span<const Range> buckets, std::span<const uint64_t> observed_keys);
// The numerator alone: sum over keys of the upper (end - 1) of the key's bucket.
uint64_t padded_rows(std::span<const Range> buckets, std::span<const uint64_t> observed_keys);

// `count` request lengths, log-normal with the given median and log-space sigma, rounded and
// clipped to [1, max]. The same lengths for a seed with any standard library: its own generator
// and Box-Muller transform, not <random>'s distributions (whose output differs between libstdc++
// and libc++); only a libm differing in the last bit could move a value sitting on a .5 boundary.
std::vector<uint64_t> lognormal_trace(double median, size_t count, uint64_t max, uint64_t seed,
                                      double sigma = 1.0);

}  // namespace ladder
}  // namespace rungs
