// SPDX-License-Identifier: Apache-2.0
// What the CLI tests share: the built `rungs` run as a user runs it (stdout, stderr and the exit
// code), and the example files they run it on.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace rungs_cli_test {

struct Result {
  int code;
  std::string out;  // stdout, then "\n--stderr--\n" and stderr
};

// Runs the CLI with `args` (shell syntax) after `prefix` (environment assignments).
Result cli(const std::string& args, const std::string& prefix = "");

// The JSON the command printed on stdout.
nlohmann::json json_of(const Result& r);

// Whether stdout or stderr holds `text`.
bool has(const Result& r, const std::string& text);

inline const std::string kModels = std::string(RUNGS_SOURCE_DIR) + "/examples/models/";
inline const std::string kTrace = std::string(RUNGS_SOURCE_DIR) + "/examples/traces/chat-lognormal-2000.txt";
inline const std::string kMlp = kModels + "mlp.json";
inline const std::string kSyn = " --synthetic lognormal:8:20:32 ";

}  // namespace rungs_cli_test
