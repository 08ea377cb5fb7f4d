// SPDX-License-Identifier: Apache-2.0
// rungs_make_models: writes (or checks) the bundled example models and traces.
//
//   rungs_make_models examples            # rewrite examples/models/* and examples/traces/*
//   rungs_make_models --check examples    # exit 1 if a committed file differs from a fresh one
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "examples/models/bundled_models.hpp"
#include "rungs/error.hpp"

namespace {

struct Option {
  const char* flag;
  const char* help;
};
constexpr Option kOptions[] = {
    {"--check", "compare the files under <examples-dir> with freshly generated ones; write nothing"},
    {"--help", "print this help"},
};

void usage(std::FILE* to) {
  std::fprintf(to, "usage: rungs_make_models [--check] <examples-dir>\n\n"
                   "Generates examples/models/{mlp,encoder,classifier}.{json,safetensors} and\n"
                   "examples/traces/chat-lognormal-2000.txt deterministically.\n\noptions:\n");
  for (const Option& o : kOptions) std::fprintf(to, "  %-10s %s\n", o.flag, o.help);
}

std::vector<uint8_t> read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

int main(int argc, char** argv) {
  bool check = false;
  std::string dir;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--check") == 0) {
      check = true;
    } else if (std::strcmp(argv[i], "--help") == 0) {
      usage(stdout);
      return 0;
    } else if (argv[i][0] == '-' || !dir.empty()) {
      std::fprintf(stderr, "rungs_make_models: unexpected argument '%s'\n\n", argv[i]);
      usage(stderr);
      return 2;
    } else {
      dir = argv[i];
    }
  }
  if (dir.empty()) {
    usage(stderr);
    return 2;
  }
  try {
    int differ = 0;
    for (const auto& f : rungs::examples::make_bundled_files()) {
      const std::filesystem::path p = std::filesystem::path(dir) / f.path;
      if (check) {
        const bool same = std::filesystem::exists(p) && read_all(p) == f.bytes;
        std::printf("%-40s %s\n", f.path.c_str(), same ? "ok" : "DIFFERS");
        differ += same ? 0 : 1;
        continue;
      }
      std::filesystem::create_directories(p.parent_path());
      std::ofstream out(p, std::ios::binary | std::ios::trunc);
      out.write(reinterpret_cast<const char*>(f.bytes.data()), static_cast<std::streamsize>(f.bytes.size()));
      if (!out) {
        std::fprintf(stderr, "rungs_make_models: cannot write %s\n", p.string().c_str());
        return 1;
      }
      std::printf("%-40s %zu bytes\n", f.path.c_str(), f.bytes.size());
    }
    return differ == 0 ? 0 : 1;
  } catch (const rungs::Error& e) {
    std::fprintf(stderr, "rungs_make_models: %s\n", e.what());
    return 1;
  }
}
