// SPDX-License-Identifier: Apache-2.0
// CacheStats: ratios and the JSON form (rungs/cache.hpp), field by field from the schema
// (rungs/cache_stats_schema.hpp).
#include <nlohmann/json.hpp>

#include "rungs/cache.hpp"
#include "rungs/cache_stats_schema.hpp"

namespace rungs {
namespace {

double ratio(uint64_t num, uint64_t den) {
  return den == 0 ? 1.0 : static_cast<double>(num) / static_cast<double>(den);
}

nlohmann::ordered_json bucket_json(const BucketStats& b) {
  nlohmann::ordered_json j;
  j["range"] = {b.range.start, b.range.end};
  stats_schema::for_each_bucket_only([&](const char* name, auto member) { j[name] = b.*member; });
  stats_schema::for_each_summed([&](const char* name, const char*, auto member, auto) { j[name] = b.*member; });
  j["waste"] = ratio(b.padded_rows, b.actual_rows);
  if (b.active_supported) {
    j["active_supported"] = *b.active_supported;
    if (!*b.active_supported) j["active_reason"] = b.active_reason;
    if (!b.active_differs_from_padding.empty()) j["active_differs_from_padding"] = b.active_differs_from_padding;
  } else {
    j["active_supported"] = nullptr;
  }
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
  stats_schema::for_each_summed([&](const char*, const char* name, auto, auto member) { t[name] = this->*member; });
  stats_schema::for_each_total_only([&](const char* name, auto member) { t[name] = this->*member; });
  t["waste"] = waste();
  t["compute_waste"] = compute_waste();
  j["totals"] = std::move(t);
  return j.dump(2);
}

}  // namespace rungs
