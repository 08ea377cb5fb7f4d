// SPDX-License-Identifier: Apache-2.0
// rungs/cache.hpp: compile at max, run at less.
//
// BucketedCompileCache keeps one CompiledGraph per bucket of a ladder of key ranges (usually a
// sequence length). A key finds its bucket, the bucket compiles once at its upper extent
// (upper = end - 1), and every key of the bucket runs that graph with inputs padded to `upper`
// rows (run_padded). With active extent on, run_padded computes only the real rows instead.
// CompileCache is the exact-key sibling: one graph per caller key, LRU-evicted past a count or a
// byte budget. Both are safe to call from several threads at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "rungs/graph.hpp"
#include "rungs/hir.hpp"
#include "rungs/ladder.hpp"
#include "rungs/session.hpp"
#include "rungs/types.hpp"

namespace rungs {

struct BucketEntry {
  uint64_t upper;        // the extent the graph was compiled for: range.end - 1
  CompiledGraph* graph;  // owned by the cache, stable for the cache's lifetime
};

// An input whose outer axis is the bucketed one: data is [rows, inner], padded to upper rows.
// data is in its own element type (TensorView, converted exactly to f32 as CompiledGraph::run does).
struct PaddedInput {
  std::string_view name;
  TensorView data;
  size_t inner;
};

// As PaddedInput, but row_inner == std::nullopt passes the input through unpadded.
struct CacheRunInput {
  std::string_view name;
  TensorView data;
  std::optional<size_t> row_inner;
};

// How run_padded computed a run. Padded: the whole compiled extent, inputs padded to upper rows.
// Active: only the actual rows (CompiledGraph::run_rows), so padding cost no compute.
enum class RunMode {
  Padded,
  Active
};

struct PaddedRun {
  uint64_t upper;
  std::vector<std::vector<float>> outputs;
  RunMode mode = RunMode::Padded;  // how this run was computed (counted in BucketStats too)
};

// data as [actual, inner] -> upper*inner values, zeros appended. Error(InvalidArgument) for
// inner == 0, a length that is not a multiple of inner, or more rows than upper ("exceed upper").
std::vector<float> pad_rows(std::span<const float> data, size_t inner, uint64_t upper);
// The first actual*inner values of data as [rows, inner]; the same errors ("exceed upper" when
// actual is more than the rows the data holds).
std::vector<float> slice_rows(std::span<const float> data, size_t inner, size_t actual);

struct BucketStats {
  Range range{};
  uint64_t upper = 0;
  bool compiled = false;
  uint64_t hits = 0;             // calls served by the already compiled graph (build not called)
  uint64_t compiles = 0;         // successful compiles (0 or 1)
  uint64_t failed_compiles = 0;  // build, compile or param upload threw; the bucket stayed empty
  double compile_ms = 0;         // build + compile + param upload, summed over attempts
  uint64_t runs = 0;             // run_padded / run_padded_mixed runs (padded_runs + active_runs)
  uint64_t padded_runs = 0;
  uint64_t active_runs = 0;
  uint64_t actual_rows = 0;    // sum of actual_rows over runs
  uint64_t padded_rows = 0;    // sum of upper over runs: the rows the ladder pads to
  uint64_t computed_rows = 0;  // rows really computed: upper for a padded run, actual for an active one
  double run_ms = 0;           // time inside CompiledGraph::run / run_rows
  double overhead_ms = 0;      // the rest of run_padded: lookup, validation, pad, slice, stats
  // The graph's own work counter (CompiledGraph::elements_computed: output elements its kernels
  // wrote over every run, including runs made on the graph directly).
  uint64_t elements_computed = 0;
  // Active extent: unknown until the bucket was prepared (std::nullopt), then whether it is
  // supported and, when not, why. When supported, active_differs_from_padding is empty if active
  // runs equal padded ones on the real rows, else names the node where padding would reach them
  // (a model without a mask): active runs are then the exact results and padded runs are not.
  std::optional<bool> active_supported;
  std::string active_reason;
  std::string active_differs_from_padding;
  size_t arena_bytes = 0;  // the compiled graph's arena
  size_t param_bytes = 0;  // params as this graph reports them (a shared copy counts in each graph)
};

struct CacheStats {
  std::vector<BucketStats> buckets;
  uint64_t hits = 0;
  uint64_t compiles = 0;
  uint64_t failed_compiles = 0;
  uint64_t out_of_range = 0;  // calls whose key was outside every bucket (build never called)
  double compile_ms = 0;
  uint64_t runs = 0;
  uint64_t padded_runs = 0;
  uint64_t active_runs = 0;
  uint64_t actual_rows = 0;
  uint64_t padded_rows = 0;
  uint64_t computed_rows = 0;
  double run_ms = 0;
  double overhead_ms = 0;
  uint64_t elements_computed = 0;
  size_t arena_bytes = 0;          // sum over compiled buckets
  size_t param_bytes_summed = 0;   // sum of each graph's param_bytes (shared copies counted again)
  size_t weight_bytes = 0;         // weights held in memory: each distinct stored copy once
  size_t distinct_weight_copies = 0;

  double waste() const;          // padded_rows / actual_rows (1 with no rows)
  double compute_waste() const;  // computed_rows / actual_rows (1 with no rows)
  std::string to_json() const;
};

namespace detail {
// What a build callable returned, in one type the non-template internals take.
struct Built {
  std::variant<Graph, HirModule> source;
  ParamMap params;
};
inline Built to_built(Built b) { return b; }  // a build that already decided (the JS bindings)
inline Built to_built(Graph g) { return {std::move(g), {}}; }
inline Built to_built(HirModule m) { return {std::move(m), {}}; }
inline Built to_built(std::pair<Graph, ParamMap> p) { return {std::move(p.first), std::move(p.second)}; }
inline Built to_built(std::pair<HirModule, ParamMap> p) { return {std::move(p.first), std::move(p.second)}; }
using BuildRef = std::function<Built(uint64_t)>;
}  // namespace detail

// Thread safety (api.md 5.2): every method may be called from several threads at once. Each
// bucket compiles exactly once even under a race (callers of that bucket wait for it; callers of
// other buckets never do). A build that throws leaves its bucket uncompiled; a later call retries.
class BucketedCompileCache {
 public:
  // Buckets are validated (Error(InvalidArgument)): at least 1 bucket, none empty, no overlap.
  BucketedCompileCache(Device device, std::vector<Range> buckets);
  static BucketedCompileCache with_policy(Device device, std::vector<Range> buckets,
                                          std::optional<PrecisionPolicy> policy);
  static BucketedCompileCache power_of_two_ladder(Device device, uint64_t min, uint64_t max);
  static BucketedCompileCache power_of_two_ladder_with_policy(Device device, uint64_t min, uint64_t max,
                                                              std::optional<PrecisionPolicy> policy);

  BucketedCompileCache(BucketedCompileCache&&) noexcept;
  BucketedCompileCache& operator=(BucketedCompileCache&&) noexcept;
  ~BucketedCompileCache();

  // build(upper) returns a Graph (get_or_compile*, run_padded*) or a HirModule (*_hir); every
  // entry point also takes a build returning std::pair<Graph or HirModule, ParamMap>, whose
  // params are uploaded on the bucket's first compile. A key outside every bucket returns
  // std::nullopt without calling build; a compiled bucket returns its graph without calling it.
  template <class F>
  std::optional<BucketEntry> get_or_compile(uint64_t key, F build) {
    return acquire(key, wrap(build), compile_options());
  }
  template <class F>
  std::optional<BucketEntry> get_or_compile_with_options(uint64_t key, F build, const CompileOptions& options) {
    return acquire(key, wrap(build), options);
  }
  template <class H>
  std::optional<BucketEntry> get_or_compile_hir(uint64_t key, H build) {
    return acquire(key, wrap(build), compile_options());
  }
  template <class H>
  std::optional<BucketEntry> get_or_compile_hir_with_options(uint64_t key, H build, const CompileOptions& options) {
    return acquire(key, wrap(build), options);
  }
  template <class FP>
  std::optional<BucketEntry> ensure_graph_with_params(uint64_t key, FP build, const CompileOptions& options) {
    return acquire(key, wrap(build), options);
  }
  template <class HP>
  std::optional<BucketEntry> ensure_hir_with_params(uint64_t key, HP build, const CompileOptions& options) {
    return acquire(key, wrap(build), options);
  }

  std::optional<size_t> bucket_for(uint64_t key) const;  // the first bucket holding key
  std::span<const Range> buckets() const;
  size_t compiled_count() const;
  size_t total_buckets() const;

  // Finds or compiles key's bucket, pads every input to upper rows (pad_rows), runs, and slices
  // output i to actual_rows rows with slice_rows(out, output_inners[i], actual_rows);
  // output_inners[i] == 0, or i past the end, returns output i unsliced. Inputs are checked
  // before anything compiles; actual_rows above upper is Error(InvalidArgument).
  template <class F>
  std::optional<PaddedRun> run_padded(uint64_t key, size_t actual_rows, F build, std::span<const PaddedInput> inputs,
                                      std::span<const size_t> output_inners) {
    std::vector<CacheRunInput> mixed;
    mixed.reserve(inputs.size());
    for (const PaddedInput& in : inputs) mixed.push_back({in.name, in.data, in.inner});
    return run_impl(key, actual_rows, wrap(build), mixed, output_inners);
  }
  // As run_padded; an input with row_inner == std::nullopt passes through unpadded.
  template <class F>
  std::optional<PaddedRun> run_padded_mixed(uint64_t key, size_t actual_rows, F build,
                                            std::span<const CacheRunInput> inputs,
                                            std::span<const size_t> output_inners) {
    return run_impl(key, actual_rows, wrap(build), inputs, output_inners);
  }

  // Active extent (off by default). When on, run_padded* asks each bucket's graph once
  // (CompiledGraph::prepare_active_rows(upper)) whether it can compute only the real rows; if so
  // runs call run_rows(unpadded inputs, actual_rows) and padding costs no compute, else they fall
  // back to padded runs. An active run computes the graph as if compiled at actual_rows: the same
  // outputs as a padded run for a model that masks its padding, the exact ones where padding is
  // not (no mask: BucketStats::active_differs_from_padding says so). Rows past actual_rows of an
  // unsliced output, which an active run never computed, come back as zeros. stats() counts each
  // mode.
  BucketedCompileCache& set_active_extent(bool on);
  bool active_extent() const;

  // The options a bucket compiles with when the call names none (run_padded*, get_or_compile,
  // get_or_compile_hir): CompileOptions{} until set. Buckets compiled before the call keep theirs.
  BucketedCompileCache& set_compile_options(const CompileOptions& options);
  CompileOptions compile_options() const;

  // Byte budget (0, the default: no limit). bytes() is what the compiled buckets hold: arena plus
  // params of each, as CompileCache counts them (CompileReport::arena_bytes + param_bytes). A
  // compile that would take bytes() past max_bytes() is refused with Error(OutOfRange) naming the
  // bucket and the figures, before its arena is allocated and before its params are uploaded; the
  // bucket stays uncompiled (stats count a failed compile), nothing is evicted, and a later call
  // with a larger budget compiles it. Params set later on a BucketEntry's graph are not counted.
  BucketedCompileCache& set_max_bytes(size_t max_bytes);
  size_t max_bytes() const;
  size_t bytes() const;

  CacheStats stats() const;
  Device device() const;
  std::optional<PrecisionPolicy> policy() const;

  struct Impl;

 private:
  explicit BucketedCompileCache(std::unique_ptr<Impl> impl);
  template <class F>
  static detail::BuildRef wrap(F& build) {
    return [&build](uint64_t upper) { return detail::to_built(std::invoke(build, upper)); };
  }
  std::optional<BucketEntry> acquire(uint64_t key, const detail::BuildRef& build, const CompileOptions& options);
  std::optional<PaddedRun> run_impl(uint64_t key, size_t actual_rows, const detail::BuildRef& build,
                                    std::span<const CacheRunInput> inputs, std::span<const size_t> output_inners);
  std::unique_ptr<Impl> impl_;
};

// An exact-key cache of compiled graphs: one graph per caller key, the least recently used
// evicted once there are more than max_entries entries or they hold more than max_bytes (arena
// plus params of each entry, from its CompileReport). 0 means no limit. An entry bigger than the
// whole byte budget is refused with Error(OutOfRange) and nothing is evicted for it: its arena
// before it is allocated, its params (at their stored width) before they are uploaded. Graphs are
// handed out as shared_ptr, so one evicted while in use stays alive until released. Thread-safe;
// one key compiles once even under a race.
class CompileCache {
 public:
  explicit CompileCache(Device device, size_t max_entries = 0, size_t max_bytes = 0,
                        std::optional<PrecisionPolicy> policy = std::nullopt);
  CompileCache(CompileCache&&) noexcept;
  CompileCache& operator=(CompileCache&&) noexcept;
  ~CompileCache();

  // build(key) returns a Graph, a HirModule, or a pair of one with a ParamMap (uploaded once).
  // A hit returns the cached graph without calling build and makes it the most recently used.
  template <class B>
  std::shared_ptr<CompiledGraph> get_or_compile(uint64_t key, B build, const CompileOptions& options = {}) {
    return acquire(key, [&build](uint64_t k) { return detail::to_built(std::invoke(build, k)); }, options);
  }

  bool contains(uint64_t key) const;
  size_t size() const;
  size_t bytes() const;  // arena + params of the entries held
  void clear();

  size_t max_entries() const;
  size_t max_bytes() const;
  uint64_t hits() const;
  uint64_t compiles() const;
  uint64_t evictions() const;

  struct Impl;

 private:
  std::shared_ptr<CompiledGraph> acquire(uint64_t key, const detail::BuildRef& build, const CompileOptions& options);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rungs
