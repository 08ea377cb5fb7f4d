// SPDX-License-Identifier: Apache-2.0
// `rungs inspect`: what the compiler made of a model at one extent.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "limits.hpp"
#include "output.hpp"
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
};

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
  check_input_file("model", o.model);
  Model model = load_model(o.model);
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
  cmd->add_option("model", o->model, "Model description (.json)")->required();
  cmd->add_option("--extent", o->extent, "Size of the bucket dim to compile at")->required()->check(whole_number(1));
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
