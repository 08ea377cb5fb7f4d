// SPDX-License-Identifier: Apache-2.0
// rungs/cache_stats_schema.hpp: the one list of the cache statistics' fields.
//
// Every place that handles BucketStats / CacheStats field by field walks these lists instead of
// naming the fields again: the totals BucketedCompileCache::stats() sums, CacheStats::to_json, the
// wasm conversion to JS objects (whose keys are the camelCase of the names here), and the test
// that checks the TypeScript types (wasm/npm/index.d.ts) against them. A new counter is one line
// here plus its member.
#pragma once

#include <string>
#include <string_view>

#include "rungs/cache.hpp"

namespace rungs::stats_schema {

// Counters kept per bucket and summed over the buckets into the totals:
// f(bucket_name, total_name, &BucketStats::member, &CacheStats::member), in JSON order.
template <class F>
void for_each_summed(F&& f) {
  f("hits", "hits", &BucketStats::hits, &CacheStats::hits);
  f("compiles", "compiles", &BucketStats::compiles, &CacheStats::compiles);
  f("failed_compiles", "failed_compiles", &BucketStats::failed_compiles, &CacheStats::failed_compiles);
  f("compile_ms", "compile_ms", &BucketStats::compile_ms, &CacheStats::compile_ms);
  f("runs", "runs", &BucketStats::runs, &CacheStats::runs);
  f("padded_runs", "padded_runs", &BucketStats::padded_runs, &CacheStats::padded_runs);
  f("active_runs", "active_runs", &BucketStats::active_runs, &CacheStats::active_runs);
  f("actual_rows", "actual_rows", &BucketStats::actual_rows, &CacheStats::actual_rows);
  f("padded_rows", "padded_rows", &BucketStats::padded_rows, &CacheStats::padded_rows);
  f("computed_rows", "computed_rows", &BucketStats::computed_rows, &CacheStats::computed_rows);
  f("run_ms", "run_ms", &BucketStats::run_ms, &CacheStats::run_ms);
  f("overhead_ms", "overhead_ms", &BucketStats::overhead_ms, &CacheStats::overhead_ms);
  f("elements_computed", "elements_computed", &BucketStats::elements_computed, &CacheStats::elements_computed);
  f("arena_bytes", "arena_bytes", &BucketStats::arena_bytes, &CacheStats::arena_bytes);
  // A shared packed copy counts in every graph holding it: summed, hence the total's name.
  f("param_bytes", "param_bytes_summed", &BucketStats::param_bytes, &CacheStats::param_bytes_summed);
}

// Plain fields of the totals only: f(name, &CacheStats::member).
template <class F>
void for_each_total_only(F&& f) {
  f("out_of_range", &CacheStats::out_of_range);
  f("weight_bytes", &CacheStats::weight_bytes);
  f("distinct_weight_copies", &CacheStats::distinct_weight_copies);
}

// Plain fields of a bucket only: f(name, &BucketStats::member). (range, active_supported and
// active_reason have shapes of their own and are written by hand, after these.)
template <class F>
void for_each_bucket_only(F&& f) {
  f("upper", &BucketStats::upper);
  f("compiled", &BucketStats::compiled);
}

// Derived ratios, written after the fields: f(name, value).
inline constexpr std::string_view kBucketRatios[] = {"waste"};
inline constexpr std::string_view kTotalRatios[] = {"waste", "compute_waste"};
// Totals that count buckets: "buckets" (how many) and "compiled" (how many hold a graph) in the
// JSON totals; the JS object carries the bucket list itself under "buckets".

// "failed_compiles" -> "failedCompiles": the JS spelling of a name.
inline std::string camel_case(std::string_view name) {
  std::string out;
  bool up = false;
  for (char c : name) {
    if (c == '_') {
      up = true;
      continue;
    }
    out += up ? static_cast<char>(c - 'a' + 'A') : c;
    up = false;
  }
  return out;
}

}  // namespace rungs::stats_schema
