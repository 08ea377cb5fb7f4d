// SPDX-License-Identifier: Apache-2.0
// BucketedCompileCache (rungs/cache.hpp): bucket lookup, single-flight compile per bucket,
// run_padded with padded or active-extent runs, and the per-bucket counters behind stats().
//
// Concurrency: each bucket (Slot) has its own mutex and condition variable. The compiled graph is
// published through an atomic pointer, so the hit path takes no compile lock; a miss marks the
// slot `compiling`, compiles without holding any lock, then publishes (or, on a throw, clears the
// mark and wakes the waiters, one of which retries). Counters sit under a per-slot stats mutex.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>

#include "core/cache/build_and_compile.hpp"
#include "core/cache/byte_budget.hpp"
#include "core/cache/single_flight.hpp"
#include "core/cache/weights.hpp"
#include "core/check.hpp"
#include "rungs/cache.hpp"
#include "rungs/cache_stats_schema.hpp"

namespace rungs {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string range_text(const Range& r) {
  return "[" + std::to_string(r.start) + ", " + std::to_string(r.end) + ")";
}

enum ActiveState : int { kActiveUnknown = 0, kActiveYes = 1, kActiveNo = 2 };

struct Slot {
  Range range{};
  uint64_t upper = 0;

  std::mutex m;  // guards compiling, graph, active_reason
  cache_detail::SingleFlight flight;
  bool compiling = false;
  std::unique_ptr<CompiledGraph> graph;
  std::atomic<CompiledGraph*> ready{nullptr};  // graph.get() once compiled
  std::atomic<int> active{kActiveUnknown};     // ActiveState, set once under m
  std::string active_reason;
  std::string active_differs;  // CompiledGraph::active_rows_differs_from_padding

  mutable std::mutex stats_m;
  BucketStats st;  // counters only; range, upper, compiled, sizes are filled in by stats()
};

}  // namespace

struct BucketedCompileCache::Impl {
  Device device = Device::Cpu;
  std::optional<PrecisionPolicy> policy;
  std::vector<Range> buckets;
  std::vector<std::unique_ptr<Slot>> slots;
  std::atomic<bool> active_extent{false};
  std::atomic<uint64_t> out_of_range{0};
  std::atomic<size_t> compiled{0};
  cache_detail::ByteBudget budget;  // set_max_bytes; off (0) by default
  mutable std::mutex options_m;
  CompileOptions options;  // set_compile_options: what run_padded* and get_or_compile{,_hir} compile with

  CompileOptions compile_options() const {
    std::lock_guard<std::mutex> lock(options_m);
    return options;
  }

  std::optional<size_t> bucket_for(uint64_t key) const {
    for (size_t i = 0; i < buckets.size(); ++i)
      if (key >= buckets[i].start && key < buckets[i].end) return i;
    return std::nullopt;
  }

  // Asks the graph once whether it can run only the real rows. Called with slot.m held and before
  // the graph is published (or, when active extent was switched on later, see prepare_late).
  static void prepare_active(Slot& slot, CompiledGraph& graph) {
    const bool ok = graph.prepare_active_rows(static_cast<int64_t>(slot.upper));
    slot.active_reason = ok ? std::string() : graph.active_rows_reason();
    slot.active_differs = ok ? graph.active_rows_differs_from_padding() : std::string();
    slot.active.store(ok ? kActiveYes : kActiveNo, std::memory_order_release);
  }

  // `slow` (optional) is set when the call compiled or waited for a compile.
  CompiledGraph* acquire(Slot& slot, const detail::BuildRef& build, const CompileOptions& options,
                         bool* slow = nullptr) {
    if (CompiledGraph* g = slot.ready.load(std::memory_order_acquire)) {
      std::lock_guard<std::mutex> s(slot.stats_m);
      ++slot.st.hits;
      return g;
    }
    if (slow) *slow = true;
    std::unique_lock<std::mutex> lock(slot.m);
    if (CompiledGraph* g = slot.flight.claim_or_wait(
            lock, [&] { return slot.ready.load(std::memory_order_acquire); },
            [&]() -> bool& { return slot.compiling; })) {
      lock.unlock();
      std::lock_guard<std::mutex> s(slot.stats_m);
      ++slot.st.hits;
      return g;
    }
    lock.unlock();

    const auto t0 = Clock::now();
    std::unique_ptr<CompiledGraph> graph;
    try {
      graph = compile_within_budget(slot, build, options);
      if (active_extent.load(std::memory_order_acquire)) {
        std::lock_guard<std::mutex> g(slot.m);
        prepare_active(slot, *graph);
      }
    } catch (...) {
      const double ms = ms_since(t0);
      {
        std::lock_guard<std::mutex> s(slot.stats_m);
        ++slot.st.failed_compiles;
        slot.st.compile_ms += ms;
      }
      std::unique_lock<std::mutex> g(slot.m);
      slot.active.store(kActiveUnknown, std::memory_order_release);
      slot.flight.land(g, [&] { slot.compiling = false; });  // a waiter retries with its own build
      throw;
    }
    const double ms = ms_since(t0);
    CompiledGraph* raw = graph.get();
    {
      std::unique_lock<std::mutex> g(slot.m);
      slot.graph = std::move(graph);
      slot.ready.store(raw, std::memory_order_release);
      slot.flight.land(g, [&] { slot.compiling = false; });
    }
    compiled.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> s(slot.stats_m);
    ++slot.st.compiles;
    slot.st.compile_ms += ms;
    return raw;
  }

  // build + compile + param upload under the byte budget (byte_budget.hpp): the arena is refused
  // before it is planned into memory, the params before they are uploaded, and the exact bytes are
  // charged last. Throws Error(OutOfRange) naming the bucket when it does not fit.
  std::unique_ptr<CompiledGraph> compile_within_budget(const Slot& slot, const detail::BuildRef& build,
                                                       const CompileOptions& options) {
    cache_detail::Refusal refusal;
    refusal.who = "BucketedCompileCache: bucket " + range_text(slot.range) + " (upper " + std::to_string(slot.upper) + ")";
    const size_t limit = budget.limit();
    refusal.budget = "the byte budget of " + std::to_string(limit) + " bytes";
    refusal.advice = "raise set_max_bytes or use fewer or smaller buckets";
    refusal.over = [&](size_t) {
      const std::optional<size_t> left = budget.remaining();
      return "but the byte budget has " + std::to_string(left.value_or(0)) + " of " + std::to_string(limit) +
             " bytes left; " + refusal.advice;
    };
    cache_detail::Budgeted b =
        cache_detail::compile_within(device, policy, build(slot.upper), options, budget.remaining(), refusal);
    // Charged under the budget's lock: racing compiles of two buckets can never pass it together.
    budget.charge(b.bytes, refusal.who, "arena " + std::to_string(b.graph->report().arena_bytes) + " + params " + std::to_string(b.graph->report().param_bytes));
    return std::move(b.graph);
  }

  // Active extent switched on after this bucket compiled: prepare it now. CompiledGraph::
  // prepare_active_rows must then be safe against concurrent run() on the same graph (it only
  // fills the graph's row plan, which run() does not read); the slot mutex keeps it to one caller.
  static bool active_ok(Slot& slot, CompiledGraph& graph) {
    int state = slot.active.load(std::memory_order_acquire);
    if (state == kActiveUnknown) {
      std::lock_guard<std::mutex> g(slot.m);
      state = slot.active.load(std::memory_order_acquire);
      if (state == kActiveUnknown) {
        prepare_active(slot, graph);
        state = slot.active.load(std::memory_order_acquire);
      }
    }
    return state == kActiveYes;
  }
};

BucketedCompileCache::BucketedCompileCache(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

BucketedCompileCache::BucketedCompileCache(Device device, std::vector<Range> buckets)
    : BucketedCompileCache(with_policy(device, std::move(buckets), std::nullopt)) {}

BucketedCompileCache BucketedCompileCache::with_policy(Device device, std::vector<Range> buckets,
                                                       std::optional<PrecisionPolicy> policy) {
  ladder::validate(buckets, "BucketedCompileCache");
  auto impl = std::make_unique<Impl>();
  impl->device = device;
  impl->policy = policy;
  impl->buckets = std::move(buckets);
  impl->slots.reserve(impl->buckets.size());
  for (const Range& r : impl->buckets) {
    auto slot = std::make_unique<Slot>();
    slot->range = r;
    slot->upper = r.end - 1;
    impl->slots.push_back(std::move(slot));
  }
  return BucketedCompileCache(std::move(impl));
}

BucketedCompileCache BucketedCompileCache::power_of_two_ladder(Device device, uint64_t min, uint64_t max) {
  return with_policy(device, ladder::power_of_two(min, max), std::nullopt);
}

BucketedCompileCache BucketedCompileCache::power_of_two_ladder_with_policy(Device device, uint64_t min, uint64_t max,
                                                                           std::optional<PrecisionPolicy> policy) {
  return with_policy(device, ladder::power_of_two(min, max), policy);
}

BucketedCompileCache::BucketedCompileCache(BucketedCompileCache&&) noexcept = default;
BucketedCompileCache& BucketedCompileCache::operator=(BucketedCompileCache&&) noexcept = default;
BucketedCompileCache::~BucketedCompileCache() = default;

std::optional<BucketEntry> BucketedCompileCache::acquire(uint64_t key, const detail::BuildRef& build,
                                                         const CompileOptions& options) {
  const std::optional<size_t> index = impl_->bucket_for(key);
  if (!index) {
    impl_->out_of_range.fetch_add(1, std::memory_order_relaxed);
    return std::nullopt;
  }
  Slot& slot = *impl_->slots[*index];
  CompiledGraph* graph = impl_->acquire(slot, build, options);
  return BucketEntry{slot.upper, graph};
}

std::optional<size_t> BucketedCompileCache::bucket_for(uint64_t key) const { return impl_->bucket_for(key); }
std::span<const Range> BucketedCompileCache::buckets() const { return impl_->buckets; }
size_t BucketedCompileCache::compiled_count() const { return impl_->compiled.load(std::memory_order_relaxed); }
size_t BucketedCompileCache::total_buckets() const { return impl_->buckets.size(); }
Device BucketedCompileCache::device() const { return impl_->device; }
std::optional<PrecisionPolicy> BucketedCompileCache::policy() const { return impl_->policy; }

BucketedCompileCache& BucketedCompileCache::set_active_extent(bool on) {
  impl_->active_extent.store(on, std::memory_order_release);
  return *this;
}
BucketedCompileCache& BucketedCompileCache::set_max_bytes(size_t max_bytes) {
  impl_->budget.set_limit(max_bytes);
  return *this;
}
size_t BucketedCompileCache::max_bytes() const { return impl_->budget.limit(); }
size_t BucketedCompileCache::bytes() const { return impl_->budget.used(); }

BucketedCompileCache& BucketedCompileCache::set_compile_options(const CompileOptions& options) {
  std::lock_guard<std::mutex> lock(impl_->options_m);
  impl_->options = options;
  return *this;
}
CompileOptions BucketedCompileCache::compile_options() const { return impl_->compile_options(); }

bool BucketedCompileCache::active_extent() const { return impl_->active_extent.load(std::memory_order_acquire); }

std::optional<PaddedRun> BucketedCompileCache::run_impl(uint64_t key, size_t actual_rows,
                                                        const detail::BuildRef& build,
                                                        std::span<const CacheRunInput> typed_inputs,
                                                        std::span<const size_t> output_inners) {
  const auto t_start = Clock::now();
  // Typed inputs become f32 first (exactly: an integer past 2^24 throws naming the input, before
  // anything is counted or compiled). An f32 input is viewed, not copied.
  std::vector<std::vector<float>> converted(typed_inputs.size());
  std::vector<std::span<const float>> values(typed_inputs.size());
  std::vector<CacheRunInput> f32_inputs;
  f32_inputs.reserve(typed_inputs.size());
  for (size_t i = 0; i < typed_inputs.size(); ++i) {
    const CacheRunInput& in = typed_inputs[i];
    values[i] = in.data.to_f32(converted[i], "run_padded: input '" + std::string(in.name) + "'");
    f32_inputs.push_back({in.name, values[i], in.row_inner});
  }
  const std::span<const CacheRunInput> inputs = f32_inputs;
  const std::optional<size_t> index = impl_->bucket_for(key);
  if (!index) {
    impl_->out_of_range.fetch_add(1, std::memory_order_relaxed);
    return std::nullopt;
  }
  Slot& slot = *impl_->slots[*index];
  const uint64_t upper = slot.upper;

  // Check everything that can be checked before compiling, so a bad call compiles nothing.
  if (actual_rows > upper)
    fail(ErrorCode::InvalidArgument, "run_padded: actual_rows " + std::to_string(actual_rows) + " exceed upper " +
                                         std::to_string(upper) + " of bucket " + range_text(slot.range) +
                                         " (key " + std::to_string(key) + ")");
  bool rows_match = true;  // every padded input holds exactly actual_rows rows
  for (const CacheRunInput& in : inputs) {
    if (!in.row_inner) continue;
    const size_t inner = *in.row_inner;
    const std::string who = "run_padded: input '" + std::string(in.name) + "'";
    if (inner == 0) fail(ErrorCode::InvalidArgument, who + ": inner must be >= 1 (got 0)");
    if (in.data.size() % inner != 0)
      fail(ErrorCode::InvalidArgument, who + ": " + std::to_string(in.data.size()) +
                                           " values are not a whole number of rows of inner " + std::to_string(inner));
    const size_t rows = in.data.size() / inner;
    if (rows > upper)
      fail(ErrorCode::InvalidArgument, who + ": " + std::to_string(rows) + " rows exceed upper " +
                                           std::to_string(upper) + " of bucket " + range_text(slot.range));
    if (rows != actual_rows) rows_match = false;
  }

  const auto t_acquire = Clock::now();
  bool waited = false;
  CompiledGraph& graph = *impl_->acquire(slot, build, impl_->compile_options(), &waited);
  // Compiling (or waiting for another caller's compile) is compile time, not hit-path overhead.
  const double compile_ms = waited ? ms_since(t_acquire) : 0.0;
  const bool active = impl_->active_extent.load(std::memory_order_acquire) && rows_match && actual_rows > 0 &&
                      Impl::active_ok(slot, graph);

  std::vector<NamedInput> named;
  named.reserve(inputs.size());
  std::vector<std::vector<float>> padded;  // keeps the padded copies alive for the run
  std::vector<std::vector<float>> outputs;
  double run_ms = 0;
  if (active) {
    for (const CacheRunInput& in : inputs) named.push_back({in.name, in.data});
    const auto t0 = Clock::now();
    outputs = graph.run_rows(named, static_cast<int64_t>(actual_rows));
    run_ms = ms_since(t0);
  } else {
    padded.reserve(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      const CacheRunInput& in = inputs[i];
      if (in.row_inner) {
        padded.push_back(pad_rows(values[i], *in.row_inner, upper));
        named.push_back({in.name, padded.back()});
      } else {
        named.push_back({in.name, in.data});
      }
    }
    const auto t0 = Clock::now();
    outputs = graph.run(named);
    run_ms = ms_since(t0);
  }

  PaddedRun result{upper, {}, active ? RunMode::Active : RunMode::Padded};
  result.outputs.reserve(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::vector<float>& out = outputs[i];
    const size_t inner = i < output_inners.size() ? output_inners[i] : 0;
    if (inner == 0) {
      if (active) {
        // Unsliced: the caller gets the compiled shape; rows an active run skipped are zeros.
        const int64_t full = shape_numel(graph.output_shape(graph.output_names()[i]));
        if (full > 0 && out.size() < static_cast<size_t>(full)) out.resize(static_cast<size_t>(full), 0.0f);
      }
      result.outputs.push_back(std::move(out));
    } else if (out.size() == actual_rows * inner) {
      result.outputs.push_back(std::move(out));  // already actual rows (active run): no copy
    } else {
      result.outputs.push_back(slice_rows(out, inner, actual_rows));
    }
  }

  const double total_ms = ms_since(t_start);
  std::lock_guard<std::mutex> s(slot.stats_m);
  BucketStats& st = slot.st;
  ++st.runs;
  ++(active ? st.active_runs : st.padded_runs);
  st.actual_rows += actual_rows;
  st.padded_rows += upper;
  st.computed_rows += active ? actual_rows : upper;
  st.run_ms += run_ms;
  st.overhead_ms += total_ms - run_ms - compile_ms;
  return result;
}

CacheStats BucketedCompileCache::stats() const {
  CacheStats out;
  out.out_of_range = impl_->out_of_range.load(std::memory_order_relaxed);
  std::vector<const CompiledGraph*> graphs;
  for (const auto& slot_ptr : impl_->slots) {
    Slot& slot = *slot_ptr;
    BucketStats b;
    {
      std::lock_guard<std::mutex> s(slot.stats_m);
      b = slot.st;
    }
    b.range = slot.range;
    b.upper = slot.upper;
    const CompiledGraph* g = slot.ready.load(std::memory_order_acquire);
    b.compiled = g != nullptr;
    const int active = slot.active.load(std::memory_order_acquire);
    if (active != kActiveUnknown) {
      b.active_supported = active == kActiveYes;
      std::lock_guard<std::mutex> lock(slot.m);
      b.active_reason = slot.active_reason;
      b.active_differs_from_padding = slot.active_differs;
    }
    if (g) {
      b.arena_bytes = g->report().arena_bytes;
      b.param_bytes = g->report().param_bytes;
      b.elements_computed = g->elements_computed();
      graphs.push_back(g);
    }
    stats_schema::for_each_summed([&](const char*, const char*, auto bucket, auto total) { out.*total += b.*bucket; });
    out.buckets.push_back(std::move(b));
  }
  const cache_detail::WeightTally tally = cache_detail::tally_weights(graphs);
  out.weight_bytes = tally.bytes;
  out.distinct_weight_copies = tally.copies;
  return out;
}

}  // namespace rungs
