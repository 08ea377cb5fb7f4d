// SPDX-License-Identifier: Apache-2.0
// CacheStats: ratios and the JSON form (rungs/cache.hpp).
#include <nlohmann/json.hpp>

#include "rungs/cache.hpp"

namespace rungs {
namespace {

double ratio(uint64_t num, uint64_t den) {
  return den == 0 ? 1.0 : static_cast<double>(num) / static_cast<double>(den);
}

nlohmann::ordered_json bucket_json(const BucketStats& b) {
  nlohmann::ordered_json j;
  j["range"] = {b.range.start, b.range.end};
  j["upper"] = b.upper;
  j["compiled"] = b.compiled;
  j["hits"] = b.hits;
  j["compiles"] = b.compiles;
  j["failed_compiles"] = b.failed_compiles;
  j["compile_ms"] = b.compile_ms;
  j["runs"] = b.runs;
  j["padded_runs"] = b.padded_runs;
  j["active_runs"] = b.active_runs;
  j["actual_rows"] = b.actual_rows;
  j["padded_rows"] = b.padded_rows;
  j["computed_rows"] = b.computed_rows;
  j["waste"] = ratio(b.padded_rows, b.actual_rows);
  j["run_ms"] = b.run_ms;
  j["overhead_ms"] = b.overhead_ms;
  j["elements_computed"] = b.elements_computed;
  if (b.active_supported) {
    j["active_supported"] = *b.active_supported;
    if (!*b.active_supported) j["active_reason"] = b.active_reason;
  } else {
    j["active_supported"] = nullptr;
  }
  j["arena_bytes"] = b.arena_bytes;
  j["param_bytes"] = b.param_bytes;
  return j;
}

}  // namespace

double CacheStats::waste() const { return ratio(padded_rows, actual_rows); }
double CacheStats::compute_waste() const { return ratio(computed_rows, actual_rows); }

std::string CacheStats::to_json() const {
  nlohmann::ordered_json j;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const BucketStats& b : buckets) list.push_back(bucket_json(b));
  j["buckets"] = std::move(list);
  nlohmann::ordered_json t;
  t["buckets"] = buckets.size();
  size_t compiled = 0;
  for (const BucketStats& b : buckets) compiled += b.compiled ? 1 : 0;
  t["compiled"] = compiled;
  t["hits"] = hits;
  t["compiles"] = compiles;
  t["failed_compiles"] = failed_compiles;
  t["out_of_range"] = out_of_range;
  t["compile_ms"] = compile_ms;
  t["runs"] = runs;
  t["padded_runs"] = padded_runs;
  t["active_runs"] = active_runs;
  t["actual_rows"] = actual_rows;
  t["padded_rows"] = padded_rows;
  t["computed_rows"] = computed_rows;
  t["waste"] = waste();
  t["compute_waste"] = compute_waste();
  t["run_ms"] = run_ms;
  t["overhead_ms"] = overhead_ms;
  t["elements_computed"] = elements_computed;
  t["arena_bytes"] = arena_bytes;
  t["param_bytes_summed"] = param_bytes_summed;
  t["weight_bytes"] = weight_bytes;
  t["distinct_weight_copies"] = distinct_weight_copies;
  j["totals"] = std::move(t);
  return j.dump(2);
}

}  // namespace rungs
