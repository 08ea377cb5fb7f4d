// SPDX-License-Identifier: Apache-2.0
// `rungs info`: what this build of rungs is and what it runs on.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "commands.hpp"
#include "rungs/isa.hpp"
#include "rungs/version.hpp"

namespace rungs::cli {
namespace {

struct InfoOptions {
  std::string format = "text";
};

int run_info(const InfoOptions& options) {
  const std::string version(rungs::version());
  // The library's own answer: the detection its kernels dispatch with.
  const std::vector<std::string> isas = rungs::available_isas();
  const std::string isa = rungs::cpu_isa();
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
