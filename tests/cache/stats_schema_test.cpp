// SPDX-License-Identifier: Apache-2.0
// The cache-stats schema (rungs/cache_stats_schema.hpp) drives the totals, the JSON and the JS
// conversion; these tests check the JSON and the TypeScript types (wasm/npm/index.d.ts) carry
// exactly its fields, and that every summed total is the sum of its buckets.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "rungs/cache_stats_schema.hpp"
#include "rungs/rungs.hpp"
#include "test_util.hpp"

namespace rungs {
namespace {

// Two buckets, three runs (one padded to 8, two to 16), one key outside every bucket.
CacheStats some_stats() {
  BucketedCompileCache cache(Device::Reference, {Range{1, 9}, Range{9, 17}});
  auto build = [](uint64_t upper) {
    Graph g;
    g.output("y", g.relu(g.input("x", {static_cast<int64_t>(upper), 3})));
    return g;
  };
  for (size_t rows : {5u, 12u, 16u}) {
    std::vector<float> x(rows * 3, 1.f);
    const PaddedInput in{"x", x, 3};
    const size_t inner = 3;
    EXPECT_TRUE(cache.run_padded(rows, rows, build, std::span(&in, 1), std::span(&inner, 1)).has_value());
  }
  EXPECT_FALSE(cache.get_or_compile(40, build).has_value());
  return cache.stats();
}

std::set<std::string> keys(const nlohmann::json& j) {
  std::set<std::string> out;
  for (auto it = j.begin(); it != j.end(); ++it) out.insert(it.key());
  return out;
}

std::set<std::string> bucket_fields(bool camel) {
  auto name = [&](std::string_view n) { return camel ? stats_schema::camel_case(n) : std::string(n); };
  std::set<std::string> out = {"range"};
  stats_schema::for_each_bucket_only([&](const char* n, auto) { out.insert(name(n)); });
  stats_schema::for_each_summed([&](const char* n, const char*, auto, auto) { out.insert(name(n)); });
  out.insert(name("active_supported"));
  return out;
}

std::set<std::string> total_fields(bool camel) {
  auto name = [&](std::string_view n) { return camel ? stats_schema::camel_case(n) : std::string(n); };
  std::set<std::string> out = {"buckets"};
  stats_schema::for_each_summed([&](const char*, const char* n, auto, auto) { out.insert(name(n)); });
  stats_schema::for_each_total_only([&](const char* n, auto) { out.insert(name(n)); });
  for (std::string_view r : stats_schema::kTotalRatios) out.insert(name(r));
  return out;
}

TEST(StatsSchema, TotalsAreTheSumsOfTheBuckets) {
  const CacheStats s = some_stats();
  ASSERT_EQ(s.buckets.size(), 2u);
  EXPECT_EQ(s.runs, 3u);
  EXPECT_EQ(s.padded_rows, 8u + 16u + 16u);
  EXPECT_EQ(s.out_of_range, 1u);
  int fields = 0;
  stats_schema::for_each_summed([&](const char* name, const char*, auto bucket, auto total) {
    ++fields;
    EXPECT_EQ(s.*total, s.buckets[0].*bucket + s.buckets[1].*bucket) << name;
  });
  EXPECT_EQ(fields, 15);
}

TEST(StatsSchema, JsonCarriesExactlyTheSchemasFields) {
  const CacheStats s = some_stats();
  const auto j = nlohmann::json::parse(s.to_json());
  std::set<std::string> bucket = bucket_fields(false);
  for (std::string_view r : stats_schema::kBucketRatios) bucket.insert(std::string(r));
  EXPECT_EQ(keys(j["buckets"][0]), bucket);  // active_reason only when active extent is refused
  std::set<std::string> totals = total_fields(false);
  totals.insert("compiled");  // the number of compiled buckets
  EXPECT_EQ(keys(j["totals"]), totals);
  stats_schema::for_each_summed([&](const char* b, const char* t, auto bucket, auto total) {
    EXPECT_EQ(j["buckets"][1][b].get<double>(), static_cast<double>(s.buckets[1].*bucket)) << b;
    EXPECT_EQ(j["totals"][t].get<double>(), static_cast<double>(s.*total)) << t;
  });
}

// The fields of `export interface NAME { ... }` in a TypeScript declaration file.
std::set<std::string> ts_fields(const std::string& dts, const std::string& name) {
  const size_t at = dts.find("export interface " + name + " {");
  EXPECT_NE(at, std::string::npos) << name;
  if (at == std::string::npos) return {};
  const std::string body = dts.substr(at, dts.find("\n}", at) - at);
  std::set<std::string> out;
  const std::regex field(R"(\n\s+(\w+)\??:)");
  for (auto it = std::sregex_iterator(body.begin(), body.end(), field); it != std::sregex_iterator(); ++it)
    out.insert((*it)[1]);
  return out;
}

TEST(StatsSchema, TypeScriptTypesCarryExactlyTheSchemasFields) {
  std::ifstream f(std::string(RUNGS_SOURCE_DIR) + "/wasm/npm/index.d.ts");
  ASSERT_TRUE(f) << "cannot read wasm/npm/index.d.ts";
  std::stringstream text;
  text << f.rdbuf();
  std::set<std::string> bucket = bucket_fields(true);
  bucket.insert("activeReason");  // always present in JS ('' when supported or unknown)
  bucket.insert("activeDiffersFromPadding");  // likewise ('' unless a supported bucket differs)
  EXPECT_EQ(ts_fields(text.str(), "BucketStats"), bucket);
  EXPECT_EQ(ts_fields(text.str(), "CacheStats"), total_fields(true));
}

}  // namespace
}  // namespace rungs
