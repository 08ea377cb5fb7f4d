// rungs: the native command-line tool. `rungs --help` lists the commands.
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "rungs/error.hpp"
#include "rungs/version.hpp"

int main(int argc, char** argv) {
  CLI::App app{"rungs: compile small ML graphs to SIMD CPU kernels"};
  app.set_version_flag("--version", std::string(rungs::version()));
  app.require_subcommand(1);

  std::vector<rungs::cli::Command> commands;
  commands.push_back(rungs::cli::add_info(app));

  CLI11_PARSE(app, argc, argv);
  try {
    for (const auto& command : commands) {
      const int rc = command();
      if (rc >= 0) return rc;
    }
  } catch (const rungs::Error& e) {
    std::cerr << "rungs: error (" << rungs::to_string(e.code()) << "): " << e.what() << '\n';
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "rungs: internal error: " << e.what() << '\n';
    return 2;
  }
  return 1;
}
