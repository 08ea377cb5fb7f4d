// SPDX-License-Identifier: Apache-2.0
// `rungs inspect`: what the compiler made of a model at one extent.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "commands.hpp"
#include "limits.hpp"
#include "output.hpp"
#include "rungs/cache.hpp"
#include "rungs/model.hpp"
#include "rungs/session.hpp"
#include "workload.hpp"

namespace rungs::cli {
namespace {

struct InspectOptions {
  std::string model;
  uint64_t extent = 0;
  bool dump_passes = false;
  bool no_fusion = false;
  std::string policy = "f32";
  std::string device = "cpu";
  std::string format = "text";
  bool profile = false;
  int repetitions = 20;
  int threads = 0;
  bool check_padding = false;
  std::string lengths = "1,3,7,17,40";
  std::string ladder = "pow2:8:64";
  LoadFlags load;
};

// --check-padding: each length run exactly (compiled at it), then through a BucketedCompileCache
// padded to its bucket and with active extent; the largest difference on the real positions.
struct PaddingCase {
  uint64_t length = 0, extent = 0;
  double padded_abs = 0, padded_rel = 0;
  std::optional<double> active_abs, active_rel;
  std::string worst_output;
  std::vector<std::string> whole_outputs;  // outputs returned unsliced (compared whole)
};

std::vector<uint64_t> parse_lengths(const std::string& text) {
  std::vector<uint64_t> out;
  std::string cur;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != ',') {
      cur += text[i];
      continue;
    }
    const bool digits = !cur.empty() && cur.size() <= 9 && cur.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoull(cur) < 1)
      throw UsageError{"--lengths: expected whole numbers >= 1 separated by commas, got '" + printable(text) + "'"};
    out.push_back(std::stoull(cur));
    cur.clear();
  }
  return out;
}

// Max |a - b| and max |a - b| / max(1, |b|) over the values.
std::pair<double, double> differences(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return {INFINITY, INFINITY};
  double abs_max = 0, rel_max = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(double(a[i]) - double(b[i]));
    abs_max = std::max(abs_max, d);
    rel_max = std::max(rel_max, d / std::max(1.0, std::fabs(double(b[i]))));
  }
  return {abs_max, rel_max};
}

int run_check_padding(const InspectOptions& o, const Model& model) {
  constexpr double kTolerance = 1e-4;  // relative, as the ONNX Runtime agreement tests
  const std::vector<uint64_t> lengths = parse_lengths(o.lengths);
  const LadderSpec spec = parse_ladder_spec(o.ladder);
  const std::vector<Range> buckets = ladder_for(spec, lengths);
  const Device device = o.device == "reference" ? Device::Reference : Device::Cpu;
  CompileOptions opt;
  opt.threads = o.threads;
  const std::vector<std::string> outputs = model.output_names();
  const std::vector<size_t> inners = model.output_inners();
  auto build = [&](uint64_t upper) { return model.build(upper); };
  BucketedCompileCache padded(device, buckets), active(device, buckets);
  active.set_active_extent(true);
  std::string active_reason, active_differs;
  std::vector<PaddingCase> cases;
  for (const uint64_t len : lengths) {
    if (!padded.bucket_for(len))
      throw UsageError{"--check-padding: no bucket of --ladder " + o.ladder + " (" + ladder_to_string(buckets) + ") holds length " +
                       std::to_string(len)};
    const ModelIo io = model_io(model, len);
    const auto data = synthetic_inputs(io, len, len);  // ids below the vocabulary, masks of ones on the real rows
    auto [module, params] = model.build(len);
    CompiledGraph exact = Session(device).compile_hir(module, opt);
    for (const auto& [n, v] : params) exact.set_param(n, v);
    std::vector<NamedInput> named;
    for (size_t k = 0; k < io.inputs.size(); ++k) named.push_back({io.inputs[k].name, data[k]});
    const auto want = exact.run(named);
    const auto in = model.cache_inputs(data);
    padded.ensure_hir_with_params(len, build, opt);
    active.ensure_hir_with_params(len, build, opt);
    const auto p = padded.run_padded_mixed(len, len, build, in, inners);
    const auto a = active.run_padded_mixed(len, len, build, in, inners);
    PaddingCase c;
    c.length = len;
    c.extent = p->upper;
    const bool ran_active = active.stats().buckets[*active.bucket_for(len)].active_runs > 0;
    if (ran_active) c.active_abs = c.active_rel = 0.0;
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (!inners[i] && model.output_layouts(len)[i].follows_bucket) {
        c.whole_outputs.push_back(outputs[i]);  // follows the bucket dim on an inner axis: not comparable by rows
        continue;
      }
      const auto [pa, pr] = differences(p->outputs[i], want[i]);
      if (pr > c.padded_rel || c.worst_output.empty()) c.worst_output = outputs[i];
      c.padded_abs = std::max(c.padded_abs, pa);
      c.padded_rel = std::max(c.padded_rel, pr);
      if (ran_active) {
        const auto [aa, ar] = differences(a->outputs[i], want[i]);
        c.active_abs = std::max(*c.active_abs, aa);
        c.active_rel = std::max(*c.active_rel, ar);
      }
    }
    const BucketStats b = active.stats().buckets[*active.bucket_for(len)];
    if (!ran_active) active_reason = b.active_reason;
    else if (active_differs.empty()) active_differs = b.active_differs_from_padding;
    cases.push_back(c);
  }
  double worst = 0, worst_active = 0;
  const PaddingCase* worst_case = &cases.front();
  for (const auto& c : cases) {
    const double w = std::max(c.padded_rel, c.active_rel.value_or(0));
    if (w > worst) worst = w, worst_case = &c;
    worst_active = std::max(worst_active, c.active_rel.value_or(0));
  }
  const bool safe = worst <= kTolerance;
  const bool any_active = std::any_of(cases.begin(), cases.end(), [](const PaddingCase& c) { return c.active_abs.has_value(); });
  const bool all_active = std::all_of(cases.begin(), cases.end(), [](const PaddingCase& c) { return c.active_abs.has_value(); });
  // Active extent computes each length as if compiled at it: exact even where padding is not.
  const bool active_exact = all_active && worst_active <= kTolerance;
  const std::string verdict =
      safe ? std::string("padding-safe: ") + (any_active ? "padded and active runs match" : "padded runs match") +
                 " the exact runs on the real positions (largest relative difference " + sci(worst) + " <= " + sci(kTolerance) + ")"
           : "NOT padding-safe: padded positions reach the real ones (largest relative difference " + sci(worst) + " at length " +
                 std::to_string(worst_case->length) + ", output '" + worst_case->worst_output +
                 "'): a bucketed run of this model differs from an exact run. " +
                 (active_exact ? "Active extent is exact for it: every length ran at its real rows and matches the exact runs "
                                 "(largest relative difference " +
                                     sci(worst_active) +
                                     "); run it with active extent (a ladder with "
                                     "+active, BucketedCompileCache::set_active_extent(true))"
                               : std::string("Give its attention and pooling a mask of the real tokens, or run it with exact buckets "
                                             "(--ladder exact)"));
  if (o.format == "json") {
    nlohmann::json j = {{"model", model.name()}, {"bucket_dim", model.bucket_dim()}, {"ladder", o.ladder}, {"tolerance", kTolerance}, {"padding_safe", safe}, {"active_exact", active_exact}, {"largest_relative_difference", worst}};
    j["lengths"] = nlohmann::json::array();
    for (const auto& c : cases) {
      nlohmann::json r = {{"length", c.length}, {"extent", c.extent}, {"padded_max_abs", c.padded_abs}, {"padded_max_rel", c.padded_rel}, {"active_max_abs", nullptr}, {"active_max_rel", nullptr}, {"outputs_compared_whole", c.whole_outputs}};
      if (c.active_abs) r["active_max_abs"] = *c.active_abs, r["active_max_rel"] = *c.active_rel;
      j["lengths"].push_back(r);
    }
    j["active_reason"] = active_reason.empty() ? nlohmann::json() : nlohmann::json(active_reason);
    j["active_differs_from_padding"] = active_differs.empty() ? nlohmann::json() : nlohmann::json(active_differs);
    j["verdict"] = verdict;
    std::cout << j.dump(2) << '\n';
    return safe ? 0 : 1;
  }
  std::cout << "model " << model.name() << ": padding check along '" << model.bucket_dim() << "' with --ladder " << o.ladder
            << " (" << ladder_to_string(buckets) << ")\n"
            << "each length run exactly, then padded to its bucket and with active extent; differences on the real positions\n";
  Table t({"length", "bucket", "padded max abs", "padded max rel", "active max abs", "active max rel"});
  for (const auto& c : cases)
    t.add({std::to_string(c.length), std::to_string(c.extent), sci(c.padded_abs), sci(c.padded_rel),
           c.active_abs ? sci(*c.active_abs) : "-", c.active_rel ? sci(*c.active_rel) : "-"});
  t.print(std::cout);
  if (!active_reason.empty()) std::cout << "active extent not used: " << active_reason << '\n';
  if (!active_differs.empty()) std::cout << "active extent differs from padding at " << active_differs << '\n';
  std::cout << verdict << '\n';
  return safe ? 0 : 1;
}

// --profile: every kernel timed over `repetitions` runs of synthetic inputs (as `rungs run`
// makes them): time, share of the run, and GFLOP/s (products, attention) or GB/s (the rest).
nlohmann::json profile_json(const std::vector<KernelProfile>& prof) {
  double total = 0;
  for (const auto& k : prof) total += k.ms;
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& k : prof)
    rows.push_back({{"op", k.op},
                    {"kernel", k.kernel},
                    {"shape", k.shape},
                    {"ms", k.ms},
                    {"share", total > 0 ? k.ms / total : 0.0},
                    {"gflops", k.flops > 0 && k.ms > 0 ? k.flops / k.ms / 1e6 : 0.0},
                    {"gbytes_per_s", k.ms > 0 ? k.bytes / k.ms / 1e6 : 0.0}});
  return {{"total_ms", total}, {"kernels", rows}};
}

void print_profile(const nlohmann::json& j, int repetitions) {
  std::printf("\nprofile: mean of %d runs, %.3f ms of kernels per run\n", repetitions, j["total_ms"].get<double>());
  std::printf("%-16s %-44s %-18s %9s %6s %9s %8s\n", "op", "kernel", "shape", "ms", "share", "GFLOP/s", "GB/s");
  for (const auto& k : j["kernels"]) {
    std::string shape = "[";
    for (size_t i = 0; i < k["shape"].size(); ++i) shape += (i ? "," : "") + std::to_string(k["shape"][i].get<int64_t>());
    shape += "]";
    const double gf = k["gflops"].get<double>();
    std::printf("%-16s %-44s %-18s %9.4f %5.1f%% %9s %8.1f\n", k["op"].get<std::string>().c_str(),
                k["kernel"].get<std::string>().c_str(), shape.c_str(), k["ms"].get<double>(),
                100 * k["share"].get<double>(), gf > 0 ? std::to_string(static_cast<int>(gf + 0.5)).c_str() : "-",
                k["gbytes_per_s"].get<double>());
  }
}

int run_inspect(const InspectOptions& o) {
  Model model = load_cli_model(o.model, o.load);
  if (o.check_padding) {
    if (model.bucket_dim().empty()) {
      std::cout << "model " << model.name() << " has no bucket dim: nothing is padded, padding-safe by construction\n";
      return 0;
    }
    return run_check_padding(o, model);
  }
  if (!o.extent) throw UsageError{"inspect: give --extent E (or --check-padding)"};
  auto [module, params] = model.build(o.extent);
  CompileOptions opt;
  opt.dump_passes = o.dump_passes;
  opt.fusion = !o.no_fusion;
  opt.threads = o.threads;
  opt.policy = o.policy == "bf16" ? PrecisionPolicy::bf16_weights()
               : o.policy == "f16" ? PrecisionPolicy::f16_weights()
                                   : PrecisionPolicy::f32();
  CompiledGraph c = Session(o.device == "reference" ? Device::Reference : Device::Cpu).compile_hir(module, opt);
  for (const auto& [n, v] : params) c.set_param(n, v);
  const CompileReport& r = c.report();
  // Param bytes by precision: what the policy stores them as (see docs/precision.md).
  size_t values = 0;
  for (const auto& [n, v] : params) values += v.size();
  nlohmann::json prof;
  if (o.profile) {
    const ModelIo io = model_io(model, o.extent);
    const auto data = synthetic_inputs(io, o.extent, 1);
    std::vector<NamedInput> in;
    for (size_t k = 0; k < io.inputs.size(); ++k) in.push_back({io.inputs[k].name, data[k]});
    prof = profile_json(c.profile(in, o.repetitions));
  }
  if (o.format == "json") {
    nlohmann::json j = nlohmann::json::parse(r.to_json());
    j["model"] = model.name();
    j["extent"] = o.extent;
    j["param_values"] = values;
    j["param_bytes_f32"] = values * sizeof(float);
    if (o.profile) j["profile"] = prof;
    std::cout << j.dump(2) << '\n';
    return 0;
  }
  std::cout << "model " << model.name() << " at " << (model.bucket_dim().empty() ? "extent" : model.bucket_dim())
            << " = " << o.extent << "\n"
            << r.to_text() << "param values " << values << " (" << values * sizeof(float) << " bytes as f32; "
            << r.param_bytes << " bytes stored as " << r.policy << ")\n";
  if (o.dump_passes)
    for (const auto& p : r.passes)
      if (!p.ir_after.empty()) std::cout << "\n--- after " << p.name << " ---\n" << p.ir_after;
  if (o.profile) print_profile(prof, o.repetitions);
  return 0;
}

}  // namespace

Command add_inspect(CLI::App& app) {
  auto o = std::make_shared<InspectOptions>();
  CLI::App* cmd = app.add_subcommand("inspect", "Passes, fused kernels, arena and param bytes of a model at one extent");
  cmd->add_option("model", o->model, "Model file (.json or .onnx)")->required();
  cmd->add_option("--extent", o->extent, "Size of the bucket dim to compile at")->check(whole_number(1));
  cmd->add_flag("--check-padding", o->check_padding,
                "Run --lengths exactly, padded to their bucket and with active extent: the largest difference on the real "
                "positions (exit 1 when not padding-safe)");
  cmd->add_option("--lengths", o->lengths, "--check-padding: the lengths to run")->capture_default_str();
  cmd->add_option("--ladder", o->ladder, "--check-padding: the ladder the lengths are padded by")->capture_default_str();
  add_load_options(cmd, o->load);
  cmd->add_flag("--dump-passes", o->dump_passes, "Print the IR after each pass that changed it");
  cmd->add_flag("--no-fusion", o->no_fusion, "One kernel per primitive op");
  cmd->add_option("--policy", o->policy, "Weight storage")->check(CLI::IsMember({"f32", "bf16", "f16"}))->capture_default_str();
  cmd->add_option("--device", o->device, "Backend")->check(CLI::IsMember({"cpu", "reference"}))->capture_default_str();
  cmd->add_option("--format", o->format, "Output format")->check(CLI::IsMember({"text", "json"}))->capture_default_str();
  cmd->add_flag("--profile", o->profile, "Time every kernel over synthetic inputs: ms, share, GFLOP/s or GB/s");
  cmd->add_option("--repetitions", o->repetitions, "Runs to average with --profile")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "Kernel threads (0 = all hardware threads)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  return [cmd, o]() { return cmd->parsed() ? run_inspect(*o) : -1; };
}

}  // namespace rungs::cli
