// SPDX-License-Identifier: Apache-2.0
// `rungs bench`: a trace of request lengths through a model with one or more bucket schemes.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "output.hpp"
#include "rungs/cache.hpp"
#include "rungs/error.hpp"
#include "rungs/session.hpp"
#include "workload.hpp"

namespace rungs::cli {

Progress::Progress(std::string label, size_t total)
    : label_(std::move(label)), total_(total), tty_(isatty(2) == 1) {}
void Progress::step(size_t done) {
  if (!tty_ || total_ == 0) return;
  size_t pct = done * 100 / total_;
  if (pct == last_) return;
  last_ = pct;
  const size_t width = 30, fill = done * width / total_;
  std::cerr << '\r' << label_ << " [" << std::string(fill, '#') << std::string(width - fill, ' ') << "] " << done << '/'
            << total_ << std::flush;
}
Progress::~Progress() {
  if (tty_) std::cerr << "\r\033[K" << std::flush;
}

namespace {

struct BenchOptions {
  std::string model;
  std::string ladder;
  std::string trace;
  std::string synthetic;
  std::vector<std::string> compare;
  bool active_extent = false;
  int threads = 0;
  std::string policy = "f32";
  std::string device = "cpu";
  std::string format = "table";
};

PrecisionPolicy policy_of(const std::string& p) {
  if (p == "bf16") return PrecisionPolicy::bf16_weights();
  if (p == "f16") return PrecisionPolicy::f16_weights();
  return PrecisionPolicy::f32();
}

struct SchemeResult {
  std::string spec;
  std::vector<Range> buckets;
  CacheStats stats;
  double total_ms = 0;
  uint64_t unserved = 0;
};

SchemeResult run_scheme(const Model& model, const ModelIo& io, const LadderSpec& spec,
                        const std::vector<uint64_t>& trace, const BenchOptions& o) {
  SchemeResult r;
  r.spec = spec.text;
  r.buckets = ladder_for(spec, trace);
  Device device = o.device == "reference" ? Device::Reference : Device::Cpu;
  auto cache = BucketedCompileCache::with_policy(device, r.buckets, policy_of(o.policy));
  cache.set_active_extent(o.active_extent || spec.active);
  CompileOptions copt;
  copt.threads = o.threads;
  std::vector<size_t> output_inners;
  for (const auto& p : io.outputs) output_inners.push_back(p.inner);
  auto build = [&](uint64_t upper) { return model.build(upper); };
  // Inputs are made before the clock starts, so the timing is the cache's work alone.
  std::vector<std::vector<std::vector<float>>> data;
  data.reserve(trace.size());
  for (size_t i = 0; i < trace.size(); ++i) data.push_back(synthetic_inputs(io, trace[i], i + 1));
  std::vector<bool> prepared(r.buckets.size(), false);
  Progress progress(spec.text, trace.size());
  auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < trace.size(); ++i) {
    const uint64_t key = trace[i];
    auto bucket = cache.bucket_for(key);
    if (!bucket) {
      ++r.unserved;
      continue;
    }
    // The first request of a bucket compiles it with the requested options (run_padded would use
    // the defaults); the run below is then served from the cache.
    if (!prepared[*bucket]) {
      cache.ensure_hir_with_params(key, build, copt);
      prepared[*bucket] = true;
    }
    std::vector<CacheRunInput> in;
    for (size_t k = 0; k < io.inputs.size(); ++k) {
      std::optional<size_t> inner;
      if (io.inputs[k].inner) inner = io.inputs[k].inner;
      in.push_back({io.inputs[k].name, data[i][k], inner});
    }
    cache.run_padded_mixed(key, key, build, in, output_inners);
    progress.step(i + 1);
  }
  r.total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  r.stats = cache.stats();
  return r;
}

std::string mode_of(const BucketStats& b) {
  if (b.runs == 0) return "-";
  if (b.active_runs == b.runs) return "active";
  if (b.padded_runs == b.runs) return "padded";
  return "mixed";
}

nlohmann::json scheme_json(const SchemeResult& r, bool active) {  // active: this scheme ran with active extent
  const CacheStats& s = r.stats;
  nlohmann::json j = {{"ladder", r.spec},
                      {"active_extent", active},
                      {"requests", s.runs + r.unserved},
                      {"unserved", r.unserved},
                      {"total_ms", r.total_ms},
                      {"compiles", s.compiles},
                      {"compile_ms", s.compile_ms},
                      {"run_ms", s.run_ms},
                      {"overhead_ms", s.overhead_ms},
                      {"actual_rows", s.actual_rows},
                      {"padded_rows", s.padded_rows},
                      {"computed_rows", s.computed_rows},
                      {"waste", s.waste()},
                      {"compute_waste", s.compute_waste()},
                      {"weight_bytes", s.weight_bytes},
                      {"arena_bytes", s.arena_bytes}};
  j["buckets"] = nlohmann::json::array();
  for (const BucketStats& b : s.buckets)
    j["buckets"].push_back({{"range", {b.range.start, b.range.end}},
                            {"extent", b.upper},
                            {"hits", b.runs},
                            {"cache_hits", b.hits},
                            {"compiles", b.compiles},
                            {"compile_ms", b.compile_ms},
                            {"run_ms", b.run_ms},
                            {"actual_rows", b.actual_rows},
                            {"padded_rows", b.padded_rows},
                            {"computed_rows", b.computed_rows},
                            {"waste", b.actual_rows ? double(b.padded_rows) / double(b.actual_rows) : 1.0},
                            {"mode", mode_of(b)}});
  return j;
}

void print_table(const SchemeResult& r) {
  std::cout << "scheme " << r.spec << ": " << r.buckets.size() << " buckets (" << ladder_to_string(r.buckets) << ")\n";
  Table t({"range", "extent", "hits", "compiles", "compile ms", "run ms", "actual rows", "padded rows", "waste", "mode"});
  for (const BucketStats& b : r.stats.buckets)
    t.add({std::to_string(b.range.start) + ".." + std::to_string(b.range.end), std::to_string(b.upper),
           std::to_string(b.runs), std::to_string(b.compiles), fixed(b.compile_ms), fixed(b.run_ms),
           std::to_string(b.actual_rows), std::to_string(b.padded_rows),
           b.actual_rows ? fixed(double(b.padded_rows) / double(b.actual_rows)) : "-", mode_of(b)});
  const CacheStats& s = r.stats;
  t.add({"total", "", std::to_string(s.runs), std::to_string(s.compiles), fixed(s.compile_ms), fixed(s.run_ms),
         std::to_string(s.actual_rows), std::to_string(s.padded_rows), fixed(s.waste()), ""});
  t.print(std::cout);
  std::cout << "total " << fixed(r.total_ms) << " ms, compute waste " << fixed(s.compute_waste()) << "x";
  if (r.unserved) std::cout << ", " << r.unserved << " requests outside every bucket";
  std::cout << "\n\n";
}

int run_bench(const BenchOptions& o) {
  std::vector<LadderSpec> specs;
  if (!o.ladder.empty()) specs.push_back(parse_ladder_spec(o.ladder));
  for (const auto& c : o.compare) specs.push_back(parse_ladder_spec(c));
  if (specs.empty()) throw UsageError{"give --ladder SPEC and/or --compare SPEC,SPEC,..."};
  Model model = load_model(o.model);
  std::vector<uint64_t> trace = o.trace.empty() ? synthetic_trace(o.synthetic) : read_trace(o.trace);
  const uint64_t max_key = *std::max_element(trace.begin(), trace.end());
  ModelIo io = model_io(model, std::max<uint64_t>(max_key, 2));
  for (const auto& p : io.inputs)
    if (!model.bucket_dim().empty() && p.inner == 0 && p.shape.size() > 0 && shape_numel(p.shape) > 1 &&
        std::find(p.shape.begin(), p.shape.end(), static_cast<int64_t>(std::max<uint64_t>(max_key, 2))) != p.shape.end())
      throw Error(ErrorCode::Unsupported, "bench: input '" + p.name + "' of '" + o.model +
                                              "' has its bucket dim after a non-1 axis; run_padded pads the outer axis only");

  std::vector<SchemeResult> results;
  for (const auto& spec : specs) results.push_back(run_scheme(model, io, spec, trace, o));

  if (o.format == "json") {
    nlohmann::json j = {{"model", o.model},
                        {"model_name", model.name()},
                        {"trace", {{"source", o.trace.empty() ? "synthetic:" + o.synthetic : o.trace},
                                   {"count", trace.size()},
                                   {"max", max_key}}},
                        {"device", o.device},
                        {"policy", o.policy},
                        {"threads", o.threads}};
    j["schemes"] = nlohmann::json::array();
    for (size_t k = 0; k < results.size(); ++k)
      j["schemes"].push_back(scheme_json(results[k], o.active_extent || specs[k].active));
    std::cout << j.dump(2) << '\n';
  } else if (o.format == "csv") {
    std::cout << "scheme,range_start,range_end,extent,hits,compiles,compile_ms,run_ms,actual_rows,padded_rows,waste,mode\n";
    for (const auto& r : results)
      for (const BucketStats& b : r.stats.buckets)
        std::cout << r.spec << ',' << b.range.start << ',' << b.range.end << ',' << b.upper << ',' << b.runs << ','
                  << b.compiles << ',' << fixed(b.compile_ms, 3) << ',' << fixed(b.run_ms, 3) << ',' << b.actual_rows
                  << ',' << b.padded_rows << ','
                  << (b.actual_rows ? fixed(double(b.padded_rows) / double(b.actual_rows), 4) : "") << ','
                  << mode_of(b) << '\n';
  } else {
    std::cout << "model " << o.model << " (" << model.name() << "), " << trace.size() << " requests (max length "
              << max_key << "), device " << o.device << ", policy " << o.policy
              << (o.active_extent ? ", active extent on" : "") << "\n\n";
    for (const auto& r : results) print_table(r);
    if (results.size() > 1) {
      Table t({"scheme", "buckets", "compiles", "compile ms", "run ms", "total ms", "waste", "compute waste", "vs first"});
      for (const auto& r : results)
        t.add({r.spec, std::to_string(r.buckets.size()), std::to_string(r.stats.compiles), fixed(r.stats.compile_ms),
               fixed(r.stats.run_ms), fixed(r.total_ms), fixed(r.stats.waste()), fixed(r.stats.compute_waste()),
               fixed(results[0].total_ms / r.total_ms) + "x"});
      std::cout << "comparison (vs first: how many times faster than " << results[0].spec << ")\n";
      t.print(std::cout);
    }
  }
  return 0;
}

}  // namespace

Command add_bench(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* cmd = app.add_subcommand("bench", "Run a trace of request lengths through a model's bucketed cache");
  cmd->add_option("model", o->model, "Model description (.json with its .safetensors beside it)")->required();
  cmd->add_option("--ladder", o->ladder,
                  "Bucket scheme: pow2:MIN:MAX, geo:MIN:MAX:RATIO, lin:MIN:MAX:STEP, list:E1,E2,..., optimal:K, "
                  "exact, one:MAX; +head adds {1,2,4}, +active runs it with active extent");
  auto* tr = cmd->add_option("--trace", o->trace, "Request lengths, one a line")->check(CLI::ExistingFile);
  auto* sy = cmd->add_option("--synthetic", o->synthetic, "lognormal:MEDIAN:COUNT[:MAX[:SEED]]");
  tr->excludes(sy);
  cmd->add_option("--compare", o->compare, "More schemes to run on the same trace, side by side")->delimiter(',');
  cmd->add_flag("--active-extent", o->active_extent,
                "Every scheme computes only the real rows where the graph allows it (or +active on one spec)");
  cmd->add_option("--threads", o->threads, "Kernel threads (0 = all hardware threads)")->check(CLI::NonNegativeNumber)->capture_default_str();
  cmd->add_option("--policy", o->policy, "Weight storage")->check(CLI::IsMember({"f32", "bf16", "f16"}))->capture_default_str();
  cmd->add_option("--device", o->device, "Backend")->check(CLI::IsMember({"cpu", "reference"}))->capture_default_str();
  cmd->add_option("--format", o->format, "Output format")->check(CLI::IsMember({"table", "json", "csv"}))->capture_default_str();
  cmd->callback([cmd, tr, sy] {
    if (tr->count() == 0 && sy->count() == 0) throw CLI::RequiredError("--trace or --synthetic");
    (void)cmd;
  });
  return [cmd, o]() { return cmd->parsed() ? run_bench(*o) : -1; };
}

}  // namespace rungs::cli
