// `rungs inspect`: what the compiler made of a model at one extent.
#include <CLI/CLI.hpp>

#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "limits.hpp"
#include "output.hpp"
#include "rungs/model.hpp"
#include "rungs/session.hpp"

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
};

int run_inspect(const InspectOptions& o) {
  check_input_file("model", o.model);
  Model model = load_model(o.model);
  auto [module, params] = model.build(o.extent);
  CompileOptions opt;
  opt.dump_passes = o.dump_passes;
  opt.fusion = !o.no_fusion;
  opt.policy = o.policy == "bf16" ? PrecisionPolicy::bf16_weights()
               : o.policy == "f16" ? PrecisionPolicy::f16_weights()
                                   : PrecisionPolicy::f32();
  CompiledGraph c = Session(o.device == "reference" ? Device::Reference : Device::Cpu).compile_hir(module, opt);
  for (const auto& [n, v] : params) c.set_param(n, v);
  const CompileReport& r = c.report();
  // Param bytes by precision: what the policy stores them as (see docs/precision.md).
  size_t values = 0;
  for (const auto& [n, v] : params) values += v.size();
  if (o.format == "json") {
    nlohmann::json j = nlohmann::json::parse(r.to_json());
    j["model"] = model.name();
    j["extent"] = o.extent;
    j["param_values"] = values;
    j["param_bytes_f32"] = values * sizeof(float);
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
  return [cmd, o]() { return cmd->parsed() ? run_inspect(*o) : -1; };
}

}  // namespace rungs::cli
