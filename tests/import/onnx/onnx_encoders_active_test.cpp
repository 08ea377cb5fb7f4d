// SPDX-License-Identifier: Apache-2.0
// The committed torch-exported encoders (tests/models/onnx) through a BucketedCompileCache with
// active extent: every golden length (batch 1) must really run at its real rows (the bucket's
// active_runs counter, and the rows it computed), never by falling back to padding, and equal
// torch within 1e-4 on the real rows. unmasked_mean_encoder has no mask at all: its active runs
// are the exact result that padding alone misses (docs/active-extent.md, issue #18).
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rungs/rungs.hpp"
#include "test_util.hpp"

namespace rungs {
namespace {

std::string model_path(const std::string& name, const char* ext) {
  return std::string(RUNGS_ONNX_MODELS_DIR) + "/" + name + ext;
}

struct Case {
  size_t length;
  std::vector<std::vector<float>> inputs;   // model input order
  std::vector<std::vector<float>> outputs;  // model output order
};

std::vector<Case> batch1_cases(const Model& m, const std::string& name) {
  std::ifstream in(model_path(name, ".golden.json"));
  const nlohmann::json j = nlohmann::json::parse(in);
  std::vector<Case> out;
  for (const auto& c : j.at("cases")) {
    if (c.at("batch") != 1) continue;
    Case k;
    k.length = c.at("length").get<size_t>();
    for (const auto& i : m.inputs(k.length)) k.inputs.push_back(c.at("inputs").at(i.name).at("data").get<std::vector<float>>());
    for (const auto& o : m.output_names()) k.outputs.push_back(c.at("outputs").at(o).at("data").get<std::vector<float>>());
    out.push_back(std::move(k));
  }
  return out;
}

struct Encoder {
  const char* name;
  bool masked;  // padding-safe: padded runs equal torch too
};

class OnnxEncodersActive : public ::testing::TestWithParam<Encoder> {};

TEST_P(OnnxEncodersActive, EveryGoldenLengthRunsActiveAndMatchesTorch) {
  const Encoder e = GetParam();
  const Model m = load_model(model_path(e.name, ".onnx"));
  const std::vector<Case> cases = batch1_cases(m, e.name);
  ASSERT_GE(cases.size(), 5u);
  const auto inners = m.output_inners();
  auto active = BucketedCompileCache::power_of_two_ladder(Device::Cpu, 4, 64);
  auto padded = BucketedCompileCache::power_of_two_ladder(Device::Cpu, 4, 64);
  active.set_active_extent(true);
  auto build = [&](uint64_t upper) { return m.build(upper); };
  double worst_padded = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(e.name) + " length " + std::to_string(c.length));
    const auto in = m.cache_inputs(c.inputs);
    const size_t bucket = *active.bucket_for(c.length);
    const BucketStats before = active.stats().buckets[bucket];
    auto run = active.run_padded_mixed(c.length, c.length, build, in, inners);
    ASSERT_TRUE(run.has_value());
    const BucketStats after = active.stats().buckets[bucket];
    // The active path ran: no fallback to padding, only the real rows computed.
    ASSERT_EQ(after.active_supported, std::optional<bool>(true)) << after.active_reason;
    EXPECT_EQ(after.active_runs, before.active_runs + 1);
    EXPECT_EQ(after.padded_runs, before.padded_runs);
    EXPECT_EQ(after.computed_rows - before.computed_rows, c.length);
    EXPECT_EQ(after.active_differs_from_padding.empty(), e.masked) << after.active_differs_from_padding;
    ASSERT_EQ(run->outputs.size(), c.outputs.size());
    for (size_t o = 0; o < c.outputs.size(); ++o)
      EXPECT_LT(testing::max_rel_error(run->outputs[o], c.outputs[o]), 1e-4)
          << "output " << m.output_names()[o] << ", bucket upper " << run->upper;
    // The same request padded: equal for the masked encoders, not for the unmasked one.
    auto p = padded.run_padded_mixed(c.length, c.length, build, in, inners);
    ASSERT_TRUE(p.has_value());
    for (size_t o = 0; o < c.outputs.size(); ++o) {
      const double d = testing::max_rel_error(p->outputs[o], c.outputs[o]);
      worst_padded = std::max(worst_padded, d);
      if (e.masked) EXPECT_LT(d, 1e-4) << "padded output " << m.output_names()[o];
    }
  }
  const CacheStats s = active.stats();
  EXPECT_EQ(s.active_runs, cases.size());
  EXPECT_EQ(s.padded_runs, 0u);
  EXPECT_LT(s.elements_computed, padded.stats().elements_computed);
  if (!e.masked) EXPECT_GT(worst_padded, 0.1) << "padding should change the unmasked encoder's output";
}

INSTANTIATE_TEST_SUITE_P(Committed, OnnxEncodersActive,
                         ::testing::Values(Encoder{"bert_post_ln", true}, Encoder{"sentence_pre_ln", true},
                                           Encoder{"distilbert_classifier", true},
                                           Encoder{"unmasked_mean_encoder", false}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace rungs
