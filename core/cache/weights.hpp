// SPDX-License-Identifier: Apache-2.0
// core/cache/weights.hpp: how much weight memory a set of compiled graphs really holds, each
// stored copy counted once however many graphs (buckets) use it.
#pragma once

#include <cstddef>
#include <span>

#include "rungs/session.hpp"

namespace rungs::cache_detail {

struct WeightTally {
  size_t bytes = 0;   // bytes of the distinct stored copies
  size_t copies = 0;  // how many distinct stored copies
};

WeightTally tally_weights(std::span<const CompiledGraph* const> graphs);

}  // namespace rungs::cache_detail
