// SPDX-License-Identifier: Apache-2.0
// ladder::lognormal_trace: reproducible request lengths for benchmarks and ladder fitting.
#include <cmath>
#include <string>

#include "core/check.hpp"
#include "core/numeric/splitmix64.hpp"
#include "rungs/ladder.hpp"

namespace rungs::ladder {

std::vector<uint64_t> lognormal_trace(double median, size_t count, uint64_t max, uint64_t seed, double sigma) {
  const char* who = "ladder::lognormal_trace";
  if (!(median > 0) || !std::isfinite(median))
    fail(ErrorCode::InvalidArgument, std::string(who) + ": median must be a finite number > 0 (got " +
                                         std::to_string(median) + ")");
  if (!(sigma >= 0) || !std::isfinite(sigma))
    fail(ErrorCode::InvalidArgument, std::string(who) + ": sigma must be a finite number >= 0 (got " +
                                         std::to_string(sigma) + ")");
  if (max < 1) fail(ErrorCode::InvalidArgument, std::string(who) + ": max must be >= 1 (got 0)");

  constexpr double kTwoPi = 6.283185307179586476925;
  numeric::SplitMix64 rng{seed};
  std::vector<uint64_t> out;
  out.reserve(count);
  const double mu = std::log(median);
  const double top = static_cast<double>(max);
  for (size_t i = 0; i < count; ++i) {
    // Box-Muller, one normal per pair of uniforms (simple, and order-independent of count).
    const double z = std::sqrt(-2.0 * std::log(rng.uniform_open0())) * std::cos(kTwoPi * rng.uniform_open0());
    const double v = std::round(std::exp(mu + sigma * z));
    out.push_back(v < 1.0 ? 1 : (v >= top ? max : static_cast<uint64_t>(v)));
  }
  return out;
}

}  // namespace rungs::ladder
