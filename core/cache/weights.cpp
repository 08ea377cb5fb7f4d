// SPDX-License-Identifier: Apache-2.0
#include "core/cache/weights.hpp"

#include <unordered_set>

namespace rungs::cache_detail {

// Each stored copy once: graphs that share a copy report the same WeightBlock::id.
WeightTally tally_weights(std::span<const CompiledGraph* const> graphs) {
  WeightTally t;
  std::unordered_set<const void*> seen;
  for (const CompiledGraph* g : graphs)
    for (const CompiledGraph::WeightBlock& b : g->weight_blocks())
      if (seen.insert(b.id).second) {
        t.bytes += b.bytes;
        ++t.copies;
      }
  return t;
}

}  // namespace rungs::cache_detail
