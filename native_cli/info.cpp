// SPDX-License-Identifier: Apache-2.0
// `rungs info`: what this build of rungs is and what it runs on.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <xsimd/xsimd.hpp>

#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "commands.hpp"
#include "rungs/graph.hpp"
#include "rungs/session.hpp"
#include "rungs/version.hpp"

namespace rungs::cli {
namespace {

// x86 instruction sets rungs has kernel variants for, best first, that this CPU *and OS* support
// (xsimd checks the OS saves the wider registers, not only the CPUID bits).
std::vector<std::string> supported_isas() {
  std::vector<std::string> out;
  const auto arch = xsimd::available_architectures();
  if (arch.avx512f) out.emplace_back("avx512f");
  if (arch.avx2 && arch.fma3_avx2) out.emplace_back("avx2");
  if (arch.sse4_2) out.emplace_back("sse4.2");
  out.emplace_back("scalar");
  return out;
}

// The ISA the Cpu device's kernels dispatch to, as the compiler reports it for a one-op graph.
std::string dispatched_isa() {
  Graph graph;
  graph.output("y", graph.relu(graph.input("x", {16})));
  return Session(Device::Cpu).compile(graph).report().isa;
}

struct InfoOptions {
  std::string format = "text";
};

int run_info(const InfoOptions& options) {
  const std::string version(rungs::version());
  const std::vector<std::string> isas = supported_isas();
  const std::string isa = dispatched_isa();
  const unsigned threads = std::thread::hardware_concurrency();

  if (options.format == "json") {
    const nlohmann::json j = {{"version", version},
                              {"supported_isas", isas},
                              {"dispatched_isa", isa},
                              {"hardware_threads", threads}};
    std::cout << j.dump(2) << '\n';
    return 0;
  }
  std::cout << "rungs " << version << '\n' << "supported ISAs:   ";
  for (size_t i = 0; i < isas.size(); ++i) std::cout << (i ? " " : "") << isas[i];
  std::cout << '\n'
            << "dispatched ISA:   " << isa << '\n'
            << "hardware threads: " << threads << '\n';
  return 0;
}

}  // namespace

Command add_info(CLI::App& app) {
  auto options = std::make_shared<InfoOptions>();
  CLI::App* cmd = app.add_subcommand("info", "Version, supported and dispatched ISA, threads");
  cmd->add_option("--format", options->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  return [cmd, options]() { return cmd->parsed() ? run_info(*options) : -1; };
}

}  // namespace rungs::cli
