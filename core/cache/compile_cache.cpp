// SPDX-License-Identifier: Apache-2.0
// CompileCache (rungs/cache.hpp): exact-key LRU of compiled graphs under a count and byte budget.
//
// One mutex guards the map, the LRU list and the counters; compiles run outside it. A key being
// compiled is marked in `in_flight`, so a second caller of the same key waits for the first
// (single flight, single_flight.hpp) while callers of other keys go on.
#include <algorithm>
#include <condition_variable>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/cache/byte_budget.hpp"
#include "core/cache/single_flight.hpp"
#include "core/check.hpp"
#include "rungs/cache.hpp"

namespace rungs {

struct CompileCache::Impl {
  Device device = Device::Cpu;
  size_t max_entries = 0;
  size_t max_bytes = 0;
  std::optional<PrecisionPolicy> policy;

  struct Entry {
    std::shared_ptr<CompiledGraph> graph;
    size_t bytes = 0;
    std::list<uint64_t>::iterator lru;
  };
  mutable std::mutex m;
  cache_detail::SingleFlight flight;
  std::unordered_map<uint64_t, Entry> entries;
  std::list<uint64_t> lru;  // front: most recently used
  std::unordered_map<uint64_t, bool> in_flight;  // keys being compiled (true while their flight is up)
  size_t bytes = 0;
  uint64_t hits = 0;
  uint64_t compiles = 0;
  uint64_t evictions = 0;

  bool over_budget() const {
    return (max_entries != 0 && entries.size() > max_entries) || (max_bytes != 0 && bytes > max_bytes);
  }
};

CompileCache::CompileCache(Device device, size_t max_entries, size_t max_bytes, std::optional<PrecisionPolicy> policy)
    : impl_(std::make_unique<Impl>()) {
  impl_->device = device;
  impl_->max_entries = max_entries;
  impl_->max_bytes = max_bytes;
  impl_->policy = policy;
}
CompileCache::CompileCache(CompileCache&&) noexcept = default;
CompileCache& CompileCache::operator=(CompileCache&&) noexcept = default;
CompileCache::~CompileCache() = default;

std::shared_ptr<CompiledGraph> CompileCache::acquire(uint64_t key, const detail::BuildRef& build,
                                                     const CompileOptions& options) {
  Impl& im = *impl_;
  {
    std::unique_lock<std::mutex> lock(im.m);
    auto hit = [&]() -> std::shared_ptr<CompiledGraph> {
      auto it = im.entries.find(key);
      if (it == im.entries.end()) return nullptr;
      im.lru.splice(im.lru.begin(), im.lru, it->second.lru);
      ++im.hits;
      return it->second.graph;
    };
    if (auto graph = im.flight.claim_or_wait(lock, hit, [&]() -> bool& { return im.in_flight[key]; })) return graph;
  }

  std::shared_ptr<CompiledGraph> graph;
  size_t bytes = 0;
  try {
    // A graph past the whole budget is refused (the others are evicted to make room for one that fits).
    cache_detail::Refusal refusal;
    refusal.who = "CompileCache: the graph for key " + std::to_string(key);
    refusal.budget = "the whole budget of " + std::to_string(im.max_bytes) + " bytes";
    refusal.advice = "raise max_bytes";
    refusal.over = [&](size_t) { return "more than " + refusal.budget + "; " + refusal.advice; };
    const std::optional<size_t> allowance = im.max_bytes != 0 ? std::optional<size_t>(im.max_bytes) : std::nullopt;
    cache_detail::Budgeted b = cache_detail::compile_within(im.device, im.policy, build(key), options, allowance, refusal);
    graph = std::move(b.graph);
    bytes = b.bytes;
  } catch (...) {
    std::unique_lock<std::mutex> lock(im.m);
    im.flight.land(lock, [&] { im.in_flight.erase(key); });
    throw;
  }

  {
    std::unique_lock<std::mutex> lock(im.m);
    im.lru.push_front(key);
    im.entries[key] = Impl::Entry{graph, bytes, im.lru.begin()};
    im.bytes += bytes;
    ++im.compiles;
    while (im.over_budget() && im.lru.size() > 1) {  // the new entry fits alone, so it stays
      const uint64_t victim = im.lru.back();
      im.lru.pop_back();
      auto it = im.entries.find(victim);
      im.bytes -= it->second.bytes;
      im.entries.erase(it);
      ++im.evictions;
    }
    im.flight.land(lock, [&] { im.in_flight.erase(key); });
  }
  return graph;
}

bool CompileCache::contains(uint64_t key) const {
  std::lock_guard<std::mutex> lock(impl_->m);
  return impl_->entries.count(key) != 0;
}
size_t CompileCache::size() const {
  std::lock_guard<std::mutex> lock(impl_->m);
  return impl_->entries.size();
}
size_t CompileCache::bytes() const {
  std::lock_guard<std::mutex> lock(impl_->m);
  return impl_->bytes;
}
void CompileCache::clear() {
  std::lock_guard<std::mutex> lock(impl_->m);
  impl_->entries.clear();
  impl_->lru.clear();
  impl_->bytes = 0;
}
size_t CompileCache::max_entries() const { return impl_->max_entries; }
size_t CompileCache::max_bytes() const { return impl_->max_bytes; }
uint64_t CompileCache::hits() const {
  std::lock_guard<std::mutex> lock(impl_->m);
  return impl_->hits;
}
uint64_t CompileCache::compiles() const {
  std::lock_guard<std::mutex> lock(impl_->m);
  return impl_->compiles;
}
uint64_t CompileCache::evictions() const {
  std::lock_guard<std::mutex> lock(impl_->m);
  return impl_->evictions;
}

}  // namespace rungs
