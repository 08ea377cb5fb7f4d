// SPDX-License-Identifier: Apache-2.0
#include "cli/cli_support.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>
#include <cstdio>
#include <fstream>
#include <iterator>

namespace rungs_cli_test {

// stderr goes through a file named for this process and call: ctest runs these tests as separate
// processes in parallel, and with one shared name another test's `2>` emptied the file before
// this one read it.
Result cli(const std::string& args, const std::string& prefix) {
  static int calls = 0;
  const std::string err_file = ::testing::TempDir() + "rungs_cli_stderr_" + std::to_string(getpid()) + "_" +
                               std::to_string(calls++) + ".txt";
  std::string cmd = prefix + std::string(RUNGS_CLI) + " " + args + " 2>" + err_file;
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int status = pclose(p);
  std::ifstream ef(err_file);
  std::string err((std::istreambuf_iterator<char>(ef)), std::istreambuf_iterator<char>());
  ef.close();
  std::remove(err_file.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out + "\n--stderr--\n" + err};
}

nlohmann::json json_of(const Result& r) {
  auto end = r.out.find("\n--stderr--\n");
  return nlohmann::json::parse(r.out.substr(0, end));
}

bool has(const Result& r, const std::string& text) { return r.out.find(text) != std::string::npos; }

}  // namespace rungs_cli_test
