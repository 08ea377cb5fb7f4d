#include "core/cache/weights.hpp"

namespace rungs::cache_detail {

// Until CompiledGraph says which stored copies its params use, every graph's params are its own.
WeightTally tally_weights(std::span<const CompiledGraph* const> graphs) {
  WeightTally t;
  for (const CompiledGraph* g : graphs) {
    t.bytes += g->report().param_bytes;
    t.copies += g->report().param_bytes > 0 ? 1 : 0;
  }
  return t;
}

}  // namespace rungs::cache_detail
