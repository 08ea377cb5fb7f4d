// SPDX-License-Identifier: Apache-2.0
// `rungs plan`: the optimal ladder for a trace next to the power-of-two ladder.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "commands.hpp"
#include "limits.hpp"
#include "output.hpp"
#include "rungs/ladder.hpp"
#include "rungs/session.hpp"
#include "workload.hpp"

namespace rungs::cli {
namespace {

struct PlanOptions {
  std::string trace;
  std::string synthetic;
  size_t buckets = 6;
  uint64_t pow2_min = 8;
  std::string format = "table";
  std::string model;
  LoadFlags load;
};

// --model: what each ladder costs that model: the buckets the trace uses, each compiled at its
// extent (as the cache would, lazily), with their arena and param bytes.
struct ModelCost {
  size_t compiles = 0;
  uint64_t arena_bytes = 0, param_bytes = 0;
  double compile_ms = 0;
};

ModelCost model_cost(const Model& model, const std::vector<Range>& buckets, const std::vector<uint64_t>& trace) {
  ModelCost c;
  for (const Range& b : buckets) {
    if (std::none_of(trace.begin(), trace.end(), [&](uint64_t k) { return k >= b.start && k < b.end; })) continue;
    const uint64_t extent = b.end - 1;
    check_input_bytes(model_io(model, std::min<uint64_t>(extent, 2)), extent, "plan: a bucket of extent " + std::to_string(extent));
    const auto t0 = std::chrono::steady_clock::now();
    auto [module, params] = model.build(extent);
    CompiledGraph g = Session(Device::Cpu).compile_hir(module);
    for (const auto& [n, v] : params) g.set_param(n, v);  // each bucket's graph holds its params, packed
    c.compile_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    c.arena_bytes += g.report().arena_bytes;
    c.param_bytes += g.report().param_bytes;
    ++c.compiles;
  }
  return c;
}

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
  std::optional<Model> model;
  if (!o.model.empty()) model = load_cli_model(o.model, o.load);
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
      if (model) {
        const ModelCost c = model_cost(*model, r.buckets, trace);
        j["ladders"].back()["model_cost"] = {{"compiles", c.compiles}, {"arena_bytes", c.arena_bytes}, {"param_bytes", c.param_bytes}, {"compile_ms", c.compile_ms}};
      }
    }
    if (model) j["model"] = {{"name", model->name()}, {"bucket_dim", model->bucket_dim()}};
    std::cout << j.dump(2) << '\n';
    return 0;
  }
  std::cout << trace.size() << " requests, lengths 1.." << max_key << ", at most " << o.buckets << " buckets\n";
  std::vector<std::string> header = {"ladder", "buckets", "extents", "expected waste"};
  if (model) {
    std::cout << "model " << model->name() << " along '" << model->bucket_dim()
              << "': the buckets the trace uses, each compiled at its extent\n";
    for (const char* h : {"compiles", "arena bytes", "param bytes", "compile ms"}) header.push_back(h);
  }
  Table t(header);
  for (const auto& r : rows) {
    std::string ext;
    for (size_t i = 0; i < r.buckets.size(); ++i) ext += (i ? "," : "") + std::to_string(r.buckets[i].end - 1);
    std::vector<std::string> row = {r.name, std::to_string(r.buckets.size()), ext, fixed(r.waste, 3) + "x"};
    if (model) {
      const ModelCost c = model_cost(*model, r.buckets, trace);
      for (const std::string& v : {std::to_string(c.compiles), std::to_string(c.arena_bytes), std::to_string(c.param_bytes),
                                   fixed(c.compile_ms, 1)})
        row.push_back(v);
    }
    t.add(row);
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
  cmd->add_option("--model", o->model,
                  "A model file (.json or .onnx): compile the buckets each ladder uses for it; arena and param bytes");
  add_load_options(cmd, o->load);
  cmd->callback([tr, sy] {
    if (tr->count() == 0 && sy->count() == 0) throw CLI::RequiredError("--trace or --synthetic");
  });
  return [cmd, o]() { return cmd->parsed() ? run_plan(*o) : -1; };
}

}  // namespace rungs::cli
