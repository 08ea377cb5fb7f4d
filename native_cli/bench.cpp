// SPDX-License-Identifier: Apache-2.0
// `rungs bench`: a trace of request lengths through a model with one or more bucket schemes.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "csv.hpp"
#include "limits.hpp"
#include "output.hpp"
#include "rungs/cache.hpp"
#include "rungs/error.hpp"
#include "rungs/session.hpp"
#include "rungs/text.hpp"
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
  LoadFlags load;
  std::string ladder;
  std::string trace;
  std::string trace_text;
  std::string vocab;
  std::string synthetic;
  std::vector<std::string> compare;
  bool active_extent = false;
  int threads = 0;
  uint64_t warmup = 0;
  uint64_t repetitions = 1;
  bool strict = false;
  std::string policy = "f32";
  std::string device = "cpu";
  std::string format = "table";
};

PrecisionPolicy policy_of(const std::string& p) {
  if (p == "bf16") return PrecisionPolicy::bf16_weights();
  if (p == "f16") return PrecisionPolicy::f16_weights();
  return PrecisionPolicy::f32();
}

// Mean, sample standard deviation and percentiles (linear between closest ranks, as numpy's
// default) of a list of milliseconds.
struct Summary {
  size_t n = 0;
  double mean = 0, stddev = 0, p50 = 0, p90 = 0, p99 = 0;
};
Summary summarize(std::vector<double> v) {
  Summary s;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / double(v.size());
  double sq = 0;
  for (double x : v) sq += (x - s.mean) * (x - s.mean);
  s.stddev = v.size() > 1 ? std::sqrt(sq / double(v.size() - 1)) : 0.0;
  auto pct = [&](double p) {
    const double pos = p / 100.0 * double(v.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos)), hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
  };
  s.p50 = pct(50);
  s.p90 = pct(90);
  s.p99 = pct(99);
  return s;
}

struct Scheme {
  LadderSpec spec;
  bool active = false;
  std::vector<Range> buckets;
  uint64_t unserved = 0;
  std::vector<CacheStats> reps;                // one per measured repetition
  std::vector<double> totals_ms;               // one per measured repetition
  std::vector<double> latency_ms;              // every served request of every repetition
  std::vector<std::vector<double>> bucket_ms;  // the same, per bucket

  const CacheStats& stats() const { return reps.back(); }  // counts are the same in every repetition
  // Times averaged over the repetitions.
  double mean_of(double CacheStats::*field) const {
    double sum = 0;
    for (const auto& r : reps) sum += r.*field;
    return sum / double(reps.size());
  }
  double bucket_mean_of(size_t b, double BucketStats::*field) const {
    double sum = 0;
    for (const auto& r : reps) sum += r.buckets[b].*field;
    return sum / double(reps.size());
  }
};

// One pass of the trace through a fresh cache: every served request timed on its own (its lazy
// compile included), its inputs made before its clock starts. measured: keep the figures.
void run_pass(const Model& model, const ModelIo& io, Scheme& sc, const std::vector<uint64_t>& trace,
              const BenchOptions& o, bool measured, const std::string& label) {
  Device device = o.device == "reference" ? Device::Reference : Device::Cpu;
  auto cache = BucketedCompileCache::with_policy(device, sc.buckets, policy_of(o.policy));
  cache.set_active_extent(sc.active);
  CompileOptions copt;
  copt.threads = o.threads;
  cache.set_compile_options(copt);  // the first request of a bucket compiles it, timed with its run
  std::vector<size_t> output_inners;
  for (const auto& p : io.outputs) output_inners.push_back(p.inner);
  auto build = [&](uint64_t upper) { return model.build(upper); };
  if (sc.bucket_ms.empty()) sc.bucket_ms.resize(sc.buckets.size());
  uint64_t unserved = 0;
  double total_ms = 0;
  Progress progress(label, trace.size());
  for (size_t i = 0; i < trace.size(); ++i) {
    const uint64_t key = trace[i];
    auto bucket = cache.bucket_for(key);
    if (!bucket) {  // no inputs are made for a request no bucket serves
      ++unserved;
      continue;
    }
    const std::vector<std::vector<float>> data = synthetic_inputs(io, key, i + 1);
    const std::vector<CacheRunInput> in = model.cache_inputs(data);
    const auto t0 = std::chrono::steady_clock::now();
    cache.run_padded_mixed(key, key, build, in, output_inners);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    total_ms += ms;
    if (measured) {
      sc.latency_ms.push_back(ms);
      sc.bucket_ms[*bucket].push_back(ms);
    }
    progress.step(i + 1);
  }
  if (!measured) return;
  sc.unserved = unserved;
  sc.totals_ms.push_back(total_ms);
  sc.reps.push_back(cache.stats());
}

std::string mode_of(const BucketStats& b) {
  if (b.runs == 0) return "-";
  if (b.active_runs == b.runs) return "active";
  if (b.padded_runs == b.runs) return "padded";
  return "mixed";
}

nlohmann::json latency_json(const std::vector<double>& ms) {
  if (ms.empty()) return nullptr;
  const Summary s = summarize(ms);
  return {{"mean", s.mean}, {"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}};
}

// A scheme: the bench's own figures (requests, timings over the repetitions, latencies), and
// under "stats" the library's CacheStats::to_json of the last measured pass (every pass has the
// same counts), so the counters, rows and waste are the library's, written once.
nlohmann::json scheme_json(const Scheme& sc) {
  const CacheStats& s = sc.stats();
  const Summary totals = summarize(sc.totals_ms);
  nlohmann::json j = {{"ladder", sc.spec.text},
                      {"active_extent", sc.active},
                      {"requests", s.runs + sc.unserved},
                      {"served", s.runs},
                      {"unserved", sc.unserved},
                      {"total_ms", totals.mean},
                      {"total_ms_stddev", totals.stddev},
                      {"total_ms_runs", sc.totals_ms},
                      {"latency_ms", latency_json(sc.latency_ms)},
                      {"compile_ms", sc.mean_of(&CacheStats::compile_ms)},
                      {"run_ms", sc.mean_of(&CacheStats::run_ms)},
                      {"overhead_ms", sc.mean_of(&CacheStats::overhead_ms)}};
  j["buckets"] = nlohmann::json::array();
  for (size_t k = 0; k < s.buckets.size(); ++k) {
    const BucketStats& b = s.buckets[k];
    j["buckets"].push_back({{"range", {b.range.start, b.range.end}},
                            {"extent", b.upper},
                            {"compile_ms", sc.bucket_mean_of(k, &BucketStats::compile_ms)},
                            {"run_ms", sc.bucket_mean_of(k, &BucketStats::run_ms)},
                            {"latency_ms", latency_json(sc.bucket_ms[k])},
                            {"mode", mode_of(b)}});
  }
  j["stats"] = nlohmann::json::parse(s.to_json());
  return j;
}

std::string ms_or_dash(const std::vector<double>& ms, double Summary::*field) {
  return ms.empty() ? "-" : fixed(summarize(ms).*field, 3);
}

void print_scheme(const Scheme& sc, std::ostream& os, bool markdown, uint64_t repetitions) {
  const CacheStats& s = sc.stats();
  os << (markdown ? "### scheme `" + sc.spec.text + "`\n\n" : "scheme " + sc.spec.text + ": ") << sc.buckets.size()
     << " buckets (" << ladder_to_string(sc.buckets) << ")\n"
     << (markdown ? "\n" : "");
  Table t({"range", "extent", "requests", "hits", "compiles", "compile ms", "run ms", "p50 ms", "p90 ms", "p99 ms",
           "actual rows", "padded rows", "waste", "mode"});
  for (size_t k = 0; k < s.buckets.size(); ++k) {
    const BucketStats& b = s.buckets[k];
    t.add({std::to_string(b.range.start) + ".." + std::to_string(b.range.end), std::to_string(b.upper),
           std::to_string(b.runs), std::to_string(b.hits), std::to_string(b.compiles),
           fixed(sc.bucket_mean_of(k, &BucketStats::compile_ms)), fixed(sc.bucket_mean_of(k, &BucketStats::run_ms)),
           ms_or_dash(sc.bucket_ms[k], &Summary::p50), ms_or_dash(sc.bucket_ms[k], &Summary::p90),
           ms_or_dash(sc.bucket_ms[k], &Summary::p99), std::to_string(b.actual_rows), std::to_string(b.padded_rows),
           b.actual_rows ? fixed(double(b.padded_rows) / double(b.actual_rows)) : "-", mode_of(b)});
  }
  if (sc.unserved)
    t.add({"unserved", "-", std::to_string(sc.unserved), "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "refused"});
  t.add({"total", "", std::to_string(s.runs + sc.unserved), std::to_string(sc.stats().hits), std::to_string(s.compiles),
         fixed(sc.mean_of(&CacheStats::compile_ms)), fixed(sc.mean_of(&CacheStats::run_ms)),
         ms_or_dash(sc.latency_ms, &Summary::p50), ms_or_dash(sc.latency_ms, &Summary::p90),
         ms_or_dash(sc.latency_ms, &Summary::p99), std::to_string(s.actual_rows), std::to_string(s.padded_rows),
         fixed(s.waste()), ""});
  if (markdown)
    t.print_markdown(os);
  else
    t.print(os);
  const Summary totals = summarize(sc.totals_ms);
  os << (markdown ? "\n" : "") << "total " << fixed(totals.mean) << " ms";
  if (repetitions > 1) os << " (mean of " << repetitions << " repetitions, standard deviation " << fixed(totals.stddev) << " ms)";
  os << ", compute waste " << fixed(s.compute_waste()) << "x";
  if (sc.unserved)
    os << ", " << sc.unserved << " of " << s.runs + sc.unserved << " requests outside every bucket (not run, not in waste)";
  os << "\n\n";
}

void print_comparison(const std::vector<Scheme>& schemes, std::ostream& os, bool markdown) {
  Table t({"scheme", "buckets", "unserved", "compiles", "compile ms", "run ms", "total ms", "stddev ms", "p50 ms",
           "p90 ms", "p99 ms", "waste", "compute waste", "vs first"});
  const double first = summarize(schemes[0].totals_ms).mean;
  for (const auto& sc : schemes) {
    const Summary totals = summarize(sc.totals_ms);
    t.add({sc.spec.text, std::to_string(sc.buckets.size()), std::to_string(sc.unserved),
           std::to_string(sc.stats().compiles), fixed(sc.mean_of(&CacheStats::compile_ms)),
           fixed(sc.mean_of(&CacheStats::run_ms)), fixed(totals.mean), fixed(totals.stddev),
           ms_or_dash(sc.latency_ms, &Summary::p50), ms_or_dash(sc.latency_ms, &Summary::p90),
           ms_or_dash(sc.latency_ms, &Summary::p99), fixed(sc.stats().waste()), fixed(sc.stats().compute_waste()),
           totals.mean > 0 ? fixed(first / totals.mean) + "x" : "-"});
  }
  os << (markdown ? "### comparison\n\n" : "") << "comparison (vs first: how many times faster than "
     << schemes[0].spec.text << ")\n"
     << (markdown ? "\n" : "");
  if (markdown)
    t.print_markdown(os);
  else
    t.print(os);
}

void print_csv(const std::vector<Scheme>& schemes, std::ostream& os) {
  CsvWriter csv(os);
  csv.row({"scheme", "row", "range_start", "range_end", "extent", "requests", "hits", "compiles", "compile_ms", "run_ms",
           "total_ms", "total_ms_stddev", "p50_ms", "p90_ms", "p99_ms", "actual_rows", "padded_rows", "waste", "mode"});
  auto ms = [](const std::vector<double>& v, double Summary::*f) { return v.empty() ? std::string() : fixed(summarize(v).*f, 4); };
  for (const auto& sc : schemes) {
    const CacheStats& s = sc.stats();
    for (size_t k = 0; k < s.buckets.size(); ++k) {
      const BucketStats& b = s.buckets[k];
      csv.row({sc.spec.text, "bucket", std::to_string(b.range.start), std::to_string(b.range.end), std::to_string(b.upper),
               std::to_string(b.runs), std::to_string(b.hits), std::to_string(b.compiles),
               fixed(sc.bucket_mean_of(k, &BucketStats::compile_ms), 4), fixed(sc.bucket_mean_of(k, &BucketStats::run_ms), 4),
               "", "", ms(sc.bucket_ms[k], &Summary::p50), ms(sc.bucket_ms[k], &Summary::p90), ms(sc.bucket_ms[k], &Summary::p99),
               std::to_string(b.actual_rows), std::to_string(b.padded_rows),
               b.actual_rows ? fixed(double(b.padded_rows) / double(b.actual_rows), 4) : "", mode_of(b)});
    }
    csv.row({sc.spec.text, "unserved", "", "", "", std::to_string(sc.unserved), "0", "0", "", "", "", "", "", "", "", "0",
             "0", "", "refused"});
    const Summary totals = summarize(sc.totals_ms);
    csv.row({sc.spec.text, "total", "", "", "", std::to_string(s.runs + sc.unserved), std::to_string(sc.stats().hits),
             std::to_string(s.compiles), fixed(sc.mean_of(&CacheStats::compile_ms), 4),
             fixed(sc.mean_of(&CacheStats::run_ms), 4), fixed(totals.mean, 4), fixed(totals.stddev, 4),
             ms(sc.latency_ms, &Summary::p50), ms(sc.latency_ms, &Summary::p90), ms(sc.latency_ms, &Summary::p99),
             std::to_string(s.actual_rows), std::to_string(s.padded_rows), fixed(s.waste(), 4), ""});
  }
}

// --trace-text FILE: one request a non-blank line of FILE, its length the line's token count with
// USE Lite's tokenizer (vocab.json: --vocab, or the one beside the model). A line without tokens
// is an error naming it; at most kMaxRequests lines.
std::vector<uint64_t> text_trace(const BenchOptions& o) {
  check_input_file("trace-text", o.trace_text);
  const std::string vocab =
      o.vocab.empty() ? (std::filesystem::path(o.model).parent_path() / "vocab.json").string() : o.vocab;
  check_input_file("vocab", vocab);
  const text::UnigramTokenizer tok = text::UnigramTokenizer::load(vocab);
  std::ifstream in(o.trace_text);
  if (!in) throw Error(ErrorCode::ParseError, "trace-text '" + o.trace_text + "': cannot open the file");
  std::vector<uint64_t> out;
  std::string line;
  size_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;  // blank lines are no requests
    const size_t n = tok.encode(line).size();
    if (n == 0)
      throw Error(ErrorCode::ParseError, "trace-text '" + o.trace_text + "' line " + std::to_string(lineno) +
                                             ": no tokens in '" + printable(line) + "'");
    if (out.size() == kMaxRequests)
      throw Error(ErrorCode::OutOfRange, "trace-text '" + o.trace_text + "' line " + std::to_string(lineno) +
                                             ": more than " + std::to_string(kMaxRequests) + " requests; split the file");
    out.push_back(n);
  }
  if (out.empty()) throw Error(ErrorCode::ParseError, "trace-text '" + o.trace_text + "': no text in the file");
  return out;
}

int run_bench(const BenchOptions& o) {
  std::vector<Scheme> schemes;
  auto add = [&](const std::string& text) {
    Scheme sc;
    sc.spec = parse_ladder_spec(text);
    sc.active = o.active_extent || sc.spec.active;
    schemes.push_back(std::move(sc));
  };
  if (!o.ladder.empty()) add(o.ladder);
  for (const auto& c : split_specs(o.compare)) add(c);
  if (schemes.empty()) throw UsageError{"give --ladder SPEC and/or --compare SPEC"};
  check_input_file("model", o.model);
  std::vector<uint64_t> trace = !o.trace_text.empty() ? text_trace(o)
                                : o.trace.empty()     ? synthetic_trace(o.synthetic)
                                                      : read_trace(o.trace);
  for (auto& sc : schemes) sc.buckets = ladder_for(sc.spec, trace);
  Model model = load_cli_model(o.model, o.load);
  const uint64_t max_key = *std::max_element(trace.begin(), trace.end());
  // Inputs are padded to the extent of a request's bucket: the largest extent that serves some
  // request is checked before anything is built. A length no bucket holds (10^9 in a trace) is
  // never built.
  uint64_t served_max = 2;
  for (const auto& sc : schemes) {
    std::vector<bool> used(sc.buckets.size(), false);
    for (uint64_t key : trace) {
      auto it = std::upper_bound(sc.buckets.begin(), sc.buckets.end(), key,
                                 [](uint64_t k, const Range& r) { return k < r.end; });
      if (it != sc.buckets.end() && key >= it->start) used[static_cast<size_t>(it - sc.buckets.begin())] = true;
    }
    for (size_t k = 0; k < used.size(); ++k)
      if (used[k]) served_max = std::max(served_max, sc.buckets[k].end - 1);
  }
  ModelIo io = model_io(model, 2);
  check_input_bytes(io, served_max, "bench: a bucket of extent " + std::to_string(served_max));
  io = model_io(model, served_max);
  for (const auto& p : io.inputs)
    if (!model.bucket_dim().empty() && p.inner == 0 && p.shape.size() > 0 && shape_numel(p.shape) > 1 &&
        std::find(p.shape.begin(), p.shape.end(), static_cast<int64_t>(served_max)) != p.shape.end())
      throw Error(ErrorCode::Unsupported, "bench: input '" + p.name + "' of '" + o.model +
                                              "' has its bucket dim after a non-1 axis; run_padded pads the outer axis only");

  // Warm-up passes, then the measured ones; the schemes take turns in each, so a slow spell of a
  // shared machine does not land on one scheme only.
  for (uint64_t w = 0; w < o.warmup; ++w)
    for (auto& sc : schemes) run_pass(model, io, sc, trace, o, false, sc.spec.text + " warm-up " + std::to_string(w + 1));
  for (uint64_t r = 0; r < o.repetitions; ++r)
    for (auto& sc : schemes)
      run_pass(model, io, sc, trace, o, true,
               sc.spec.text + (o.repetitions > 1 ? " repetition " + std::to_string(r + 1) : std::string()));

  nlohmann::json context = {{"schema_version", 3},
                            {"model", o.model},
                            {"model_name", model.name()},
                            {"trace", {{"source", !o.trace_text.empty() ? "text:" + o.trace_text : o.trace.empty() ? "synthetic:" + o.synthetic
                                                                                                                   : o.trace},
                                       {"count", trace.size()},
                                       {"max", max_key}}},
                            {"device", o.device},
                            {"policy", o.policy},
                            {"threads", o.threads},
                            {"warmup", o.warmup},
                            {"repetitions", o.repetitions}};
  if (o.format == "json") {
    nlohmann::json j = context;
    j["schemes"] = nlohmann::json::array();
    for (const auto& sc : schemes) j["schemes"].push_back(scheme_json(sc));
    std::cout << j.dump(2) << '\n';
  } else if (o.format == "jsonl") {
    for (const auto& sc : schemes) {
      nlohmann::json line = context;
      line["scheme"] = scheme_json(sc);
      std::cout << line.dump() << '\n';
    }
  } else if (o.format == "csv") {
    print_csv(schemes, std::cout);
  } else {
    const bool md = o.format == "md";
    std::cout << (md ? "## rungs bench\n\n" : "") << "model " << o.model << " (" << model.name() << "), " << trace.size()
              << " requests (max length " << max_key << "), device " << o.device << ", policy " << o.policy
              << (o.active_extent ? ", active extent on" : "");
    if (o.warmup || o.repetitions > 1)
      std::cout << ", " << o.warmup << " warm-up and " << o.repetitions << " measured passes";
    std::cout << "\n\n";
    for (const auto& sc : schemes) print_scheme(sc, std::cout, md, o.repetitions);
    if (schemes.size() > 1) print_comparison(schemes, std::cout, md);
  }
  std::cout.flush();
  uint64_t unserved = 0;
  std::string which;
  for (const auto& sc : schemes)
    if (sc.unserved) {
      unserved += sc.unserved;
      which += (which.empty() ? "" : ", ") + std::to_string(sc.unserved) + " of " + std::to_string(trace.size()) +
               " with " + sc.spec.text + " (its last bucket ends at " + std::to_string(sc.buckets.back().end - 1) + ")";
    }
  if (unserved && o.strict) {
    std::cerr << "rungs: error (OutOfRange): --strict: requests outside every bucket: " << which
              << "; the longest request is " << max_key << "\n";
    return 1;
  }
  if (unserved)
    std::cerr << "rungs: warning: requests outside every bucket were not run: " << which
              << " (--strict makes this an error)\n";
  return 0;
}

}  // namespace

Command add_bench(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* cmd = app.add_subcommand("bench", "Run a trace of request lengths through a model's bucketed cache");
  cmd->add_option("model", o->model, "Model file (.json with its .safetensors beside it, or .onnx)")->required();
  add_load_options(cmd, o->load);
  cmd->add_option("--ladder", o->ladder,
                  "Bucket scheme: pow2:MIN:MAX, geo:MIN:MAX:RATIO, lin:MIN:MAX:STEP, list:E1,E2,..., optimal:K, "
                  "exact, one:MAX; +head adds {1,2,4}, +active runs it with active extent");
  auto* tr = cmd->add_option("--trace", o->trace, "Request lengths, one a line");
  auto* sy = cmd->add_option("--synthetic", o->synthetic, "lognormal:MEDIAN:COUNT[:MAX[:SEED]]");
  auto* tt = cmd->add_option("--trace-text", o->trace_text,
                             "Texts, one a line: each non-blank line a request of its token count (USE Lite's "
                             "tokenizer, --vocab)");
  cmd->add_option("--vocab", o->vocab, "vocab.json for --trace-text (default: vocab.json beside the model)")->needs(tt);
  tr->excludes(sy);
  tt->excludes(tr);
  tt->excludes(sy);
  cmd->add_option("--compare", o->compare,
                  "More schemes to run on the same trace, side by side: repeat --compare, or separate specs with ';' "
                  "or ',' (a list ladder keeps its commas: list:16,64,256,one:256 is two specs)");
  cmd->add_flag("--active-extent", o->active_extent,
                "Every scheme computes only the real rows where the graph allows it (or +active on one spec)");
  cmd->add_option("--threads", o->threads, "Kernel threads (0 = all hardware threads)")->check(thread_count())->capture_default_str();
  cmd->add_option("--warmup", o->warmup, "Passes over the trace before the measured ones (not reported)")
      ->check(whole_number(0, 1000))
      ->capture_default_str();
  cmd->add_option("--repetitions", o->repetitions,
                  "Measured passes over the trace, each with a fresh cache: totals as mean and standard deviation, "
                  "latency percentiles over every request of every pass")
      ->check(whole_number(1, 1000))
      ->capture_default_str();
  cmd->add_flag("--strict", o->strict, "Exit 1 when a request is outside every bucket (after printing the results)");
  cmd->add_option("--policy", o->policy, "Weight storage")->check(CLI::IsMember({"f32", "bf16", "f16"}))->capture_default_str();
  cmd->add_option("--device", o->device, "Backend")->check(CLI::IsMember({"cpu", "reference"}))->capture_default_str();
  cmd->add_option("--format", o->format, "Output format")->check(CLI::IsMember({"table", "md", "csv", "json", "jsonl"}))->capture_default_str();
  cmd->callback([cmd, tr, sy, tt] {
    if (tr->count() == 0 && sy->count() == 0 && tt->count() == 0)
      throw CLI::RequiredError("--trace, --trace-text or --synthetic");
    (void)cmd;
  });
  return [cmd, o]() { return cmd->parsed() ? run_bench(*o) : -1; };
}

}  // namespace rungs::cli
