// SPDX-License-Identifier: Apache-2.0
// tests/fuzz/replay_main.cpp: runs a fuzz target over files, without libFuzzer.
//
//   fuzz_<name>_replay <file or folder>...
// Used by ctest (each target's seed corpus and the crash reproducers kept beside it) so every
// build, sanitizer builds included, replays what the fuzzers found. Exit 0 when every input ran.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

int replay(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<uint8_t> data(bytes.begin(), bytes.end());
  // A copy of exactly the file's size, so a read past the end is caught by the sanitizers.
  auto exact = std::make_unique<uint8_t[]>(data.size() + 1);
  std::copy(data.begin(), data.end(), exact.get());
  return LLVMFuzzerTestOneInput(exact.get(), data.size());
}

}  // namespace

int main(int argc, char** argv) {
  size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path p(argv[i]);
    if (std::filesystem::is_directory(p)) {
      std::vector<std::filesystem::path> files;
      for (const auto& e : std::filesystem::recursive_directory_iterator(p))
        if (e.is_regular_file()) files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const auto& f : files) count += replay(f) == 0;
    } else {
      count += replay(p) == 0;
    }
  }
  std::printf("replayed %zu inputs\n", count);
  return 0;
}
