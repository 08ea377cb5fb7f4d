// SPDX-License-Identifier: Apache-2.0
// core/numeric/splitmix64.hpp: the one seedable generator of the project (Steele, Lea, Flood 2014).
// 64-bit integer arithmetic only, so every platform and compiler draws the same numbers (std::
// distributions do not): the bundled models' weights, the synthetic traces and Model's synthetic
// inputs are reproducible bit for bit everywhere.
#pragma once

#include <cstdint>

namespace rungs::numeric {

struct SplitMix64 {
  uint64_t state;

  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in (0, 1] with 53 random bits, never 0 (so log(uniform()) is finite).
  double uniform_open0() { return (static_cast<double>(next() >> 11) + 1.0) * 0x1.0p-53; }
  // Uniform in [-1, 1) with 24 random bits: 2u - 1 is exact in double.
  double symmetric() { return static_cast<double>(next() >> 40) * (2.0 / 16777216.0) - 1.0; }
};

}  // namespace rungs::numeric
