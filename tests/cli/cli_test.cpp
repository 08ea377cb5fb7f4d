// The `rungs` CLI as a user runs it: exit codes, the JSON of bench and plan, every error path.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "rungs/ladder.hpp"

namespace {

struct Result {
  int code;
  std::string out;
};

// Runs the CLI with `args` (shell syntax), stdout captured, stderr appended after a marker.
// stderr goes through a file named for this process and call: ctest runs these tests as separate
// processes in parallel, and with one shared name another test's `2>` emptied the file before
// this one read it.
Result cli(const std::string& args) {
  static int calls = 0;
  const std::string err_file = ::testing::TempDir() + "rungs_cli_stderr_" + std::to_string(getpid()) + "_" +
                               std::to_string(calls++) + ".txt";
  std::string cmd = std::string(RUNGS_CLI) + " " + args + " 2>" + err_file;
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
    uint64_t hits = 0, actual = 0, padded = 0, used = 0, compiles = 0;
    for (const auto& b : s["buckets"]) {
      hits += b["hits"].get<uint64_t>();
      actual += b["actual_rows"].get<uint64_t>();
      padded += b["padded_rows"].get<uint64_t>();
      used += b["hits"].get<uint64_t>() > 0;
      compiles += b["compiles"].get<uint64_t>();
      EXPECT_EQ(b["padded_rows"].get<uint64_t>(), b["hits"].get<uint64_t>() * b["extent"].get<uint64_t>());
    }
    EXPECT_EQ(hits, 60u) << s["ladder"];
    EXPECT_EQ(actual, s["actual_rows"].get<uint64_t>());
    EXPECT_EQ(padded, s["padded_rows"].get<uint64_t>());
    EXPECT_NEAR(s["waste"].get<double>(), double(padded) / double(actual), 1e-9);
    EXPECT_EQ(compiles, used) << "one compile per bucket used";
    EXPECT_EQ(s["compiles"].get<uint64_t>(), used);
  }
  EXPECT_EQ(j["schemes"][1]["buckets"].size(), 1u);
  EXPECT_GT(j["schemes"][1]["waste"].get<double>(), j["schemes"][0]["waste"].get<double>());
}

TEST(Cli, BenchActiveExtentComputesRealRowsOnly) {
  Result r = cli("bench " + kModels + "mlp.json --synthetic lognormal:8:30:32:5 --ladder one:32 --active-extent "
                 "--threads 1 --format json");
  ASSERT_EQ(r.code, 0) << r.out;
  auto s = json_of(r)["schemes"][0];
  EXPECT_EQ(s["computed_rows"], s["actual_rows"]);
  EXPECT_EQ(s["buckets"][0]["mode"], "active");
  // +active on one spec: only that scheme skips the padding.
  Result m = cli("bench " + kModels + "mlp.json --synthetic lognormal:8:30:32:5 --ladder one:32 --compare one:32+active "
                 "--threads 1 --format json");
  ASSERT_EQ(m.code, 0) << m.out;
  auto j = json_of(m);
  EXPECT_EQ(j["schemes"][0]["buckets"][0]["mode"], "padded");
  EXPECT_EQ(j["schemes"][1]["buckets"][0]["mode"], "active");
  EXPECT_EQ(j["schemes"][1]["active_extent"], true);
  EXPECT_LT(j["schemes"][1]["computed_rows"].get<uint64_t>(), j["schemes"][0]["computed_rows"].get<uint64_t>());
}

TEST(Cli, BenchTableAndCsv) {
  Result t = cli("bench " + kModels + "mlp.json --synthetic lognormal:24:40:256 --ladder list:64,256 --threads 1");
  ASSERT_EQ(t.code, 0) << t.out;
  EXPECT_NE(t.out.find("waste"), std::string::npos);
  Result c = cli("bench " + kModels + "mlp.json --synthetic lognormal:8:20:16 --ladder pow2:4:16 --format csv");
  ASSERT_EQ(c.code, 0) << c.out;
  EXPECT_EQ(c.out.rfind("scheme,range_start", 0), 0u) << c.out;
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

TEST(Cli, ErrorPaths) {
  // Bad arguments: usage of that command, exit 2.
  Result a = cli("bench " + kModels + "mlp.json --ladder pow2:8 --synthetic lognormal:8:10");
  EXPECT_EQ(a.code, 2) << a.out;
  EXPECT_NE(a.out.find("pow2 takes 2 values"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("Usage:"), std::string::npos) << a.out;
  EXPECT_EQ(cli("bench " + kModels + "mlp.json --ladder pow2:8:64").code, 2);  // no trace
  EXPECT_EQ(cli("plan --synthetic lognormal:8:10").code, 2);                   // --buckets missing
  EXPECT_EQ(cli("nosuchcommand").code, 2);
  EXPECT_EQ(cli("run " + kModels + "encoder.json --rows 0").code, 2);
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

}  // namespace
