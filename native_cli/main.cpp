// SPDX-License-Identifier: Apache-2.0
// rungs: the native command-line tool. `rungs --help` lists the commands, `rungs <command> --help`
// their options. Exit codes: 0 success, 1 a bad model/trace/input file or a failed run (the
// message names the file, line or field), 2 bad arguments (the command's usage is printed).
#include <CLI/CLI.hpp>

#include <exception>
#include <filesystem>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "commands.hpp"
#include "rungs/error.hpp"
#include "rungs/version.hpp"
#include "workload.hpp"

namespace {

// The deepest subcommand that was parsed: its usage is what a person needs after a mistake.
const CLI::App* active_command(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands())
    if (sub->parsed()) return active_command(*sub);
  return &app;
}

// "rungs frobnicate" names the word and lists the commands (CLI11 alone says only that a
// subcommand is required). Applies at each level: `rungs trace frob` lists trace's kinds.
bool unknown_command(const CLI::App& app, int argc, char** argv) {
  const CLI::App* level = &app;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word[0] == '-') return false;
    const auto subs = level->get_subcommands([](const CLI::App*) { return true; });
    if (subs.empty()) return false;
    const CLI::App* next = nullptr;
    std::string names;
    for (const CLI::App* sub : subs) {
      if (sub->check_name(word)) next = sub;
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!next) {
      std::cerr << "rungs: unknown command '" << word << "'" << (level == &app ? "" : " for '" + level->get_name() + "'")
                << "; the commands are: " << names << "\n\n"
                << level->help();
      return true;
    }
    level = next;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rungs: compile small ML graphs to SIMD CPU kernels, bucketed by shape"};
  app.set_version_flag("--version", std::string(rungs::version()));
  app.require_subcommand(1);

  std::vector<rungs::cli::Command> commands;
  commands.push_back(rungs::cli::add_info(app));
  commands.push_back(rungs::cli::add_run(app));
  commands.push_back(rungs::cli::add_embed(app));
  commands.push_back(rungs::cli::add_bench(app));
  commands.push_back(rungs::cli::add_plan(app));
  commands.push_back(rungs::cli::add_inspect(app));
  commands.push_back(rungs::cli::add_trace(app));

  if (unknown_command(app, argc, argv)) return 2;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "rungs: " << e.what() << "\n\n" << active_command(app)->help();
    return 2;
  }
  try {
    for (const auto& command : commands) {
      const int rc = command();
      if (rc >= 0) return rc;
    }
  } catch (const rungs::cli::UsageError& e) {
    std::cerr << "rungs: " << e.message << "\n\n" << active_command(app)->help();
    return 2;
  } catch (const rungs::Error& e) {
    std::cerr << "rungs: error (" << rungs::to_string(e.code()) << "): " << e.what() << '\n';
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "rungs: error (OutOfRange): out of memory: this machine could not allocate what the command needs; "
                 "try a smaller trace, ladder or --rows\n";
    return 1;
  } catch (const std::filesystem::filesystem_error& e) {
    std::cerr << "rungs: error (InvalidArgument): " << e.code().message() << ": '" << e.path1().string() << "'\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "rungs: internal error: " << e.what() << '\n';
    return 1;
  }
  return 1;
}
