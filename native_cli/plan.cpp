// SPDX-License-Identifier: Apache-2.0
// `rungs plan`: the optimal ladder for a trace next to the power-of-two ladder.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "limits.hpp"
#include "output.hpp"
#include "rungs/ladder.hpp"
#include "workload.hpp"

namespace rungs::cli {
namespace {

struct PlanOptions {
  std::string trace;
  std::string synthetic;
  size_t buckets = 6;
  uint64_t pow2_min = 8;
  std::string format = "table";
};

int run_plan(const PlanOptions& o) {
  std::vector<uint64_t> trace = o.trace.empty() ? synthetic_trace(o.synthetic) : read_trace(o.trace);
  const uint64_t max_key = *std::max_element(trace.begin(), trace.end());
  check_optimal_cost(trace, o.buckets, "plan --buckets " + std::to_string(o.buckets));
  auto optimal = ladder::optimal(trace, o.buckets);
  auto pow2 = ladder::power_of_two(std::min(o.pow2_min, max_key), max_key);
  struct Row {
    std::string name;
    std::vector<Range> buckets;
    double waste;
  };
  std::vector<Row> rows = {{"optimal:" + std::to_string(o.buckets), optimal, ladder::expected_waste(optimal, trace)},
                           {"pow2:" + std::to_string(std::min(o.pow2_min, max_key)) + ":" + std::to_string(max_key), pow2,
                            ladder::expected_waste(pow2, trace)}};
  if (o.format == "json") {
    nlohmann::json j = {{"trace", {{"count", trace.size()}, {"max", max_key}}}, {"max_buckets", o.buckets}};
    j["ladders"] = nlohmann::json::array();
    for (const auto& r : rows) {
      nlohmann::json b = nlohmann::json::array();
      for (const Range& x : r.buckets) b.push_back({x.start, x.end});
      std::vector<uint64_t> extents;
      for (const Range& x : r.buckets) extents.push_back(x.end - 1);
      j["ladders"].push_back({{"name", r.name}, {"buckets", b}, {"extents", extents}, {"expected_waste", r.waste},
                              {"padded_rows", ladder::padded_rows(r.buckets, trace)}});
    }
    std::cout << j.dump(2) << '\n';
    return 0;
  }
  std::cout << trace.size() << " requests, lengths 1.." << max_key << ", at most " << o.buckets << " buckets\n";
  Table t({"ladder", "buckets", "extents", "expected waste"});
  for (const auto& r : rows) {
    std::string ext;
    for (size_t i = 0; i < r.buckets.size(); ++i) ext += (i ? "," : "") + std::to_string(r.buckets[i].end - 1);
    t.add({r.name, std::to_string(r.buckets.size()), ext, fixed(r.waste, 3) + "x"});
  }
  t.print(std::cout);
  return 0;
}

}  // namespace

Command add_plan(CLI::App& app) {
  auto o = std::make_shared<PlanOptions>();
  CLI::App* cmd = app.add_subcommand("plan", "The optimal bucket ladder for a trace, next to the power-of-two ladder");
  auto* tr = cmd->add_option("--trace", o->trace, "Request lengths, one a line");
  auto* sy = cmd->add_option("--synthetic", o->synthetic, "lognormal:MEDIAN:COUNT[:MAX[:SEED]]");
  tr->excludes(sy);
  cmd->add_option("--buckets", o->buckets, "At most this many buckets")->required()->check(whole_number(1, kMaxBuckets));
  cmd->add_option("--pow2-min", o->pow2_min, "MIN of the power-of-two ladder shown beside it")->check(whole_number(1))->capture_default_str();
  cmd->add_option("--format", o->format, "Output format")->check(CLI::IsMember({"table", "json"}))->capture_default_str();
  cmd->callback([tr, sy] {
    if (tr->count() == 0 && sy->count() == 0) throw CLI::RequiredError("--trace or --synthetic");
  });
  return [cmd, o]() { return cmd->parsed() ? run_plan(*o) : -1; };
}

}  // namespace rungs::cli
