// SPDX-License-Identifier: Apache-2.0
// The CLI's errors (issue 19): what a new user trips over gets a readable message and exit code.
#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_support.hpp"
#include "test_util.hpp"

namespace {

using namespace rungs_cli_test;

// --- Issue 19: what a new user trips over. Each case: the command, its exit code, what the
// message must say, and what it must never say (CLI11's 309-digit ranges, a wrapped uint64, a raw
// exception).

struct Case {
  const char* what;
  std::string args;
  int code;
  std::vector<std::string> says;
};

void check_cases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    Result r = cli(c.args);
    EXPECT_EQ(r.code, c.code) << c.what << "\n"
                              << r.out;
    for (const auto& text : c.says) EXPECT_TRUE(has(r, text)) << c.what << ": no '" << text << "' in\n"
                                                              << r.out;
    for (const char* never : {"internal error", "terminate", "1797693134862315708", "18446744073709551615",
                              "0.000000 to", "A subcommand is required"})
      EXPECT_FALSE(has(r, never)) << c.what << ": '" << never << "' in\n"
                                  << r.out;
  }
}

TEST(CliErrors, ReadableRangesAndValues) {
  check_cases({
      {"rows 0", "run " + kMlp + " --rows 0", 2, {"--rows: must be a whole number >= 1, got '0'", "Usage:"}},
      {"rows past uint64", "run " + kMlp + " --rows 99999999999999999999999", 2, {"'99999999999999999999999' is out of range"}},
      {"rows negative", "run " + kMlp + " --rows -3", 2, {"whole number >= 1, got '-3'"}},
      {"extent 0", "inspect " + kMlp + " --extent 0", 2, {"--extent: must be a whole number >= 1"}},
      {"buckets 0", "plan" + kSyn + "--buckets 0", 2, {"--buckets: must be a whole number in [1, 4096], got '0'"}},
      {"trace count 0", "trace lognormal --count 0", 2, {"--count: must be a whole number in [1, 10000000]"}},
      {"trace count huge", "trace lognormal --count 1000000000000", 2, {"is out of range"}},
      {"trace median 0", "trace lognormal --median 0", 2, {"--median: must be a number > 0, got '0'"}},
      {"negative seed", "trace lognormal --seed -1", 2, {"--seed: must be a whole number >= 0, got '-1'"}},
      {"negative synthetic seed", "plan --synthetic lognormal:8:20:32:-1 --buckets 2", 2, {"SEED must be a whole number in [0, 9000000000000000]"}},
      {"threads past 4x hardware", "bench " + kMlp + kSyn + "--ladder pow2:4:32 --threads 100000", 2, {"--threads: '100000' is too many", "hardware threads"}},
      {"warmup negative", "bench " + kMlp + kSyn + "--ladder pow2:4:32 --warmup -1", 2, {"--warmup: must be"}},
      {"repetitions 0", "bench " + kMlp + kSyn + "--ladder pow2:4:32 --repetitions 0", 2, {"--repetitions: must be a whole number in [1, 1000], got '0'"}},
  });
}

TEST(CliErrors, UnknownCommandsAreNamedWithTheList) {
  check_cases({
      {"unknown command", "frobnicate", 2, {"unknown command 'frobnicate'", "info, run, embed, bench, plan, inspect, trace"}},
      {"unknown trace kind", "trace uniform", 2, {"unknown command 'uniform' for 'trace'", "lognormal"}},
  });
}

TEST(CliErrors, DirectoriesAndExistingFiles) {
  const std::string dir = ::testing::TempDir();
  const std::string file = dir + "rungs_cli_npy_target.txt";
  std::ofstream(file) << "x";
  check_cases({
      {"model is a directory", "run " + dir + " --rows 3", 1, {"is a directory"}},
      {"inspect a directory", "inspect " + dir + " --extent 3", 1, {"is a directory"}},
      {"bench a directory", "bench " + dir + kSyn + "--ladder pow2:4:32", 1, {"is a directory"}},
      {"trace is a directory", "plan --trace " + dir + " --buckets 2", 1, {"trace '", "is a directory"}},
      {"ids is a directory", "run " + kModels + "encoder.json --rows 3 --ids " + dir, 1, {"is a directory"}},
      {"missing model", "run " + dir + "no_such_model.json --rows 3", 1, {"no such file"}},
      {"trace into a directory", "trace lognormal --count 5 -o " + dir, 1, {"trace: -o '", "' is a directory"}},
      {"npy onto a file", "run " + kMlp + " --rows 3 --format npy -o " + file, 1, {"is a file; --format npy writes one .npy file per output into a folder"}},
  });
  std::remove(file.c_str());
}

TEST(CliErrors, ABinaryTraceIsShownEscaped) {
  const std::string path = ::testing::TempDir() + "rungs_cli_binary_trace.bin";
  {
    std::ofstream f(path, std::ios::binary);
    f << "12\n";
    f.write(
        "\x7f"
        "ELF\x01\x1b[2J\xff\xfe",
        11);
    f << "\n";
  }
  Result r = cli("plan --trace " + path + " --buckets 2");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(has(r, "line 2")) << r.out;
  EXPECT_TRUE(has(r, "\\x7fELF\\x01\\x1b[2J\\xff\\xfe")) << r.out;
  EXPECT_FALSE(has(r, "\x1b")) << "a raw escape byte reached the terminal";
  EXPECT_FALSE(has(r, "\xff")) << "a raw byte reached the terminal";
  std::remove(path.c_str());
}

// Sizes are checked before anything is allocated: each of these used to end in std::bad_alloc
// (or take many seconds and gigabytes first).
TEST(CliErrors, HugeSizesAreRefusedBeforeAllocating) {
  const std::string huge_trace = ::testing::TempDir() + "rungs_cli_huge_length.txt";
  std::ofstream(huge_trace) << "12\n999999999999999\n30\n";
  check_cases({
      {"linear ladder of 10^8 buckets", "bench " + kMlp + kSyn + "--ladder lin:1:100000000:1", 2, {"'lin:1:100000000:1' makes 100000000 buckets; at most 4096"}},
      {"geometric ladder of ratio ~1", "bench " + kMlp + kSyn + "--ladder geo:1:100000000:1.0000001", 2, {"makes more than 4096 buckets"}},
      {"optimal of 10^6 buckets", "bench " + kMlp + kSyn + "--ladder optimal:1000000", 2, {"at most 4096"}},
      {"an exact optimum of hours", "plan --synthetic lognormal:2000:1000000:100000000:1 --buckets 4096", 2, {"plan --buckets 4096: the exact optimum over", "distinct lengths and 4096 buckets need about", "ask for fewer buckets"}},
      {"the same as a ladder spec", "bench " + kMlp + " --synthetic lognormal:2000:1000000:100000000:1 --ladder optimal:64", 2, {"'optimal:64': the exact optimum over"}},
      {"synthetic trace of 10^12", "bench " + kMlp + " --synthetic lognormal:24:1000000000000 --ladder pow2:8:256", 2, {"COUNT 1000000000000 is out of range: at most 10000000 requests"}},
      {"a bucket too large to pad to", "bench " + kModels + "encoder.json" + kSyn + "--ladder one:1000000000", 1, {"bench: a bucket of extent 1000000000: the inputs at 1000000000 rows need 8000000000 bytes, more than the 1073741824 bytes (1 GiB) the CLI builds for one request"}},
      {"run at 10^9 rows", "run " + kModels + "encoder.json --rows 1000000000", 1, {"run --rows 1000000000: the inputs at"}},
      {"exact ladder over a length of 10^15", "bench " + kMlp + " --trace " + huge_trace + " --ladder exact", 1, {"the inputs at 999999999999999 rows need 255999999999999744 bytes, more than the 1073741824 bytes"}},
  });
  // A length no bucket holds is never built: reported, not run, and the run goes on.
  Result r = cli("bench " + kMlp + " --trace " + huge_trace + " --ladder pow2:4:32 --threads 1 --format json");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(json_of(r)["schemes"][0]["unserved"], 1);
  EXPECT_TRUE(has(r, "warning: requests outside every bucket were not run: 1 of 3 with pow2:4:32")) << r.out;
  std::remove(huge_trace.c_str());
}

// Within every limit (768 MB of inputs) but past what the machine gives: a named error, exit 1.
TEST(CliErrors, OutOfMemoryIsANamedError) {
  if (kSanitized) GTEST_SKIP() << "an address-space limit and a sanitizer's shadow memory do not mix";
  Result r = cli("run " + kMlp + " --rows 3000000 --format json", "ulimit -v 600000; exec ");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(has(r, "rungs: error (OutOfRange): out of memory")) << r.out;
  EXPECT_FALSE(has(r, "internal error")) << r.out;
}

}  // namespace
