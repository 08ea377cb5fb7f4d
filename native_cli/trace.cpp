// SPDX-License-Identifier: Apache-2.0
// `rungs trace lognormal`: write a reproducible trace of request lengths, one a line.
#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "commands.hpp"
#include "limits.hpp"
#include "rungs/error.hpp"
#include "rungs/ladder.hpp"

namespace rungs::cli {
namespace {

struct TraceOptions {
  double median = 24;
  size_t count = 2000;
  uint64_t max = 256;
  uint64_t seed = 1;
  double sigma = 1.0;
  std::string output;
};

int run_trace(const TraceOptions& o) {
  auto lengths = ladder::lognormal_trace(o.median, o.count, o.max, o.seed, o.sigma);
  std::ofstream file;
  if (!o.output.empty()) {
    std::error_code ec;
    if (std::filesystem::is_directory(o.output, ec))
      throw Error(ErrorCode::InvalidArgument, "trace: -o '" + o.output + "' is a directory; give a file name");
    file.open(o.output);
    if (!file) throw Error(ErrorCode::InvalidArgument, "trace: cannot write '" + o.output + "'");
  }
  std::ostream& os = o.output.empty() ? std::cout : file;
  for (uint64_t l : lengths) os << l << '\n';
  return 0;
}

}  // namespace

Command add_trace(CLI::App& app) {
  auto o = std::make_shared<TraceOptions>();
  CLI::App* cmd = app.add_subcommand("trace", "Write a synthetic trace of request lengths");
  cmd->require_subcommand(1);
  CLI::App* ln = cmd->add_subcommand("lognormal", "Log-normal lengths, rounded and clipped to [1, max]");
  ln->add_option("--median", o->median, "Median length")->check(positive_number())->capture_default_str();
  ln->add_option("--count", o->count, "How many lengths")->check(whole_number(1, kMaxRequests))->capture_default_str();
  ln->add_option("--max", o->max, "Largest length")->check(whole_number(1))->capture_default_str();
  ln->add_option("--seed", o->seed, "Seed (same seed, same trace on every platform)")->check(whole_number(0))->capture_default_str();
  ln->add_option("--sigma", o->sigma, "Log-space standard deviation")->check(positive_number(100))->capture_default_str();
  ln->add_option("--output,-o", o->output, "Write to this file instead of stdout");
  return [ln, o]() { return ln->parsed() ? run_trace(*o) : -1; };
}

}  // namespace rungs::cli
