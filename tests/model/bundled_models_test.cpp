// SPDX-License-Identifier: Apache-2.0
// The bundled example models (examples/models/) and trace (examples/traces/): the committed files
// are exactly what the generator makes, they load and build, and they compute what they claim
// (checked against scalar math written here, and padding to a bucket does not change the result).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "examples/models/bundled_models.hpp"
#include "rungs/cache.hpp"
#include "rungs/ladder.hpp"
#include "rungs/model.hpp"
#include "rungs/session.hpp"

#ifndef RUNGS_EXAMPLES_DIR
#error "RUNGS_EXAMPLES_DIR must name the examples folder (tests/model/CMakeLists.txt sets it)"
#endif

namespace rungs {
namespace {

const std::string kExamples = RUNGS_EXAMPLES_DIR;

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

Model load(const std::string& name) { return load_model(kExamples + "/models/" + name + ".json"); }

// Compiles `m` at `extent` on the reference backend with its weights uploaded.
CompiledGraph compile_at(const Model& m, uint64_t extent) {
  auto [module, params] = m.build(extent);
  Session session(Device::Reference);
  CompiledGraph g = session.compile_hir(module);
  for (const auto& [name, values] : params) g.set_param(name, values);
  return g;
}

std::vector<std::vector<float>> run(const CompiledGraph& g, const std::vector<float>& ids, const std::vector<float>& mask) {
  const NamedInput in[] = {{"ids", ids}, {"mask", mask}};
  return g.run(in);
}

// `real` token ids (deterministic, spread over the vocab), padded with `pad_id` to `extent`.
void tokens(size_t real, size_t extent, float pad_id, std::vector<float>& ids, std::vector<float>& mask) {
  ids.assign(extent, pad_id);
  mask.assign(extent, 0.f);
  for (size_t i = 0; i < real; ++i) {
    ids[i] = static_cast<float>((i * 379 + 11) % 1000);
    mask[i] = 1.f;
  }
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, float rel, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  float scale = 0;
  for (float w : want) scale = std::max(scale, std::fabs(w));
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_TRUE(std::isfinite(got[i])) << what << "[" << i << "]";
    EXPECT_LE(std::fabs(got[i] - want[i]), rel * std::max(scale, 1e-6f)) << what << "[" << i << "]";
  }
}

// ---------------------------------------------------------------- the files

TEST(BundledModels, CommittedFilesAreWhatTheGeneratorMakes) {
  const auto files = examples::make_bundled_files();
  ASSERT_EQ(files.size(), 7u);
  for (const auto& f : files) {
    const auto committed = read_file(kExamples + "/" + f.path);
    ASSERT_FALSE(committed.empty()) << f.path << " is missing: run rungs_make_models " << kExamples;
    EXPECT_LT(committed.size(), 2u << 20) << f.path << " should stay below 2 MB";
    if (committed != f.bytes) {
      size_t at = 0;
      while (at < std::min(committed.size(), f.bytes.size()) && committed[at] == f.bytes[at]) ++at;
      ADD_FAILURE() << f.path << " differs from the generator's output at byte " << at << " (sizes "
                    << committed.size() << " vs " << f.bytes.size() << "); regenerate with rungs_make_models";
    }
  }
}

TEST(BundledModels, EachLoadsAndBuildsAtSeveralExtents) {
  struct Want {
    const char* name;
    const char* bucket;
    std::vector<std::string> outputs;
    TensorDType dtype;
  };
  for (const Want& w : {Want{"mlp", "rows", {"y"}, TensorDType::F32},
                        Want{"encoder", "seq", {"embedding"}, TensorDType::BF16},
                        Want{"classifier", "seq", {"logits"}, TensorDType::BF16}}) {
    const Model m = load(w.name);
    EXPECT_EQ(m.name(), w.name);
    EXPECT_EQ(m.bucket_dim(), w.bucket);
    EXPECT_EQ(m.output_names(), w.outputs);
    for (const auto& p : m.params()) EXPECT_EQ(p.dtype, w.dtype) << w.name << " " << p.name;
    for (uint64_t extent : {1, 19, 32, 257}) {
      auto [module, params] = m.build(extent);
      EXPECT_EQ(params.size(), m.params().size());
      for (const auto& in : m.inputs(extent)) {
        if (std::string(w.name) == "mlp") EXPECT_EQ(in.shape, (Shape{static_cast<int64_t>(extent), 64}));
        else EXPECT_EQ(in.shape, (Shape{1, static_cast<int64_t>(extent)}));
      }
      EXPECT_EQ(module.params().size(), m.params().size());
    }
  }
}

TEST(BundledModels, ArchitectureIsTheOneDocumented) {
  // Parameter counts from the architecture, computed here independently of the model files.
  const size_t d = 128, hidden = 512, vocab = 1000, layers = 2;
  const size_t per_layer = 2 * d                       // ln1
                           + 4 * (d * d + d)           // q, k, v, o
                           + 2 * d                     // ln2
                           + (d * hidden + hidden) + (hidden * d + d);  // mlp up, down
  const size_t encoder = vocab * d + layers * per_layer + 2 * d;
  EXPECT_EQ(load("encoder").param_count(), encoder);
  EXPECT_EQ(load("classifier").param_count(), encoder + d * 8 + 8);
  EXPECT_EQ(load("mlp").param_count(), 64u * 256 + 256 + 256 * 64 + 64);
  // The classifier's encoder is the encoder: same names, same stored values.
  const Model enc = load("encoder"), cls = load("classifier");
  for (const auto& p : enc.params()) EXPECT_EQ(cls.weights().at(p.name), enc.weights().at(p.name)) << p.name;
}

TEST(BundledModels, WeightsHaveTheirInitScales) {
  const Model m = load("encoder");
  for (const auto& p : m.params()) {
    const auto& v = m.weights().at(p.name);
    double sum = 0, sq = 0;
    for (float x : v) {
      ASSERT_TRUE(std::isfinite(x)) << p.name;
      sum += x;
      sq += static_cast<double>(x) * x;
    }
    const double mean = sum / static_cast<double>(v.size());
    const double sd = std::sqrt(sq / static_cast<double>(v.size()) - mean * mean);
    if (p.name.size() > 6 && p.name.substr(p.name.size() - 6) == ".gamma") {
      EXPECT_NEAR(mean, 1.0, 0.03) << p.name;
    } else if (p.name.size() > 7 && p.name.substr(p.name.size() - 7) == ".weight" && p.shape.size() == 2) {
      const double want = 1.0 / std::sqrt(static_cast<double>(p.shape[0]));  // residual outputs: half
      EXPECT_TRUE(std::fabs(sd - want) < 0.05 * want || std::fabs(sd - want / 2) < 0.05 * want / 2)
          << p.name << " sd " << sd << " want " << want << " or " << want / 2;
      EXPECT_NEAR(mean, 0.0, 0.1 * want) << p.name;
    }
  }
}

TEST(BundledModels, TraceIsLogNormalAroundTwentyFour) {
  std::ifstream in(kExamples + "/traces/chat-lognormal-2000.txt");
  std::vector<int> lengths;
  for (std::string line; std::getline(in, line);) lengths.push_back(std::stoi(line));
  ASSERT_EQ(lengths.size(), 2000u);
  EXPECT_GE(*std::min_element(lengths.begin(), lengths.end()), 1);
  EXPECT_LE(*std::max_element(lengths.begin(), lengths.end()), 256);
  std::vector<int> sorted = lengths;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_GE(sorted[1000], 21);
  EXPECT_LE(sorted[1000], 27);
  EXPECT_GT(sorted[1990], 100);  // a long tail
  // It is the project's log-normal generator at the documented parameters (docs/model-format.md).
  const auto want = ladder::lognormal_trace(24.0, 2000, 256, 2000, 0.8);
  EXPECT_TRUE(std::equal(lengths.begin(), lengths.end(), want.begin(), want.end(),
                         [](int a, uint64_t b) { return static_cast<uint64_t>(a) == b; }));
  // Another seed gives another trace.
  EXPECT_NE(examples::make_chat_trace(100, 1), examples::make_chat_trace(100, 2));
}

// ---------------------------------------------------------------- they compute what they claim

float gelu(float x) { return 0.5f * x * (1.f + std::erf(x / std::sqrt(2.f))); }

TEST(BundledModels, MlpMatchesScalarMath) {
  const Model m = load("mlp");
  const size_t rows = 5;
  const CompiledGraph g = compile_at(m, rows);
  std::vector<float> x(rows * 64);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i));
  const NamedInput in[] = {{"x", x}};
  const auto out = g.run(in);
  ASSERT_EQ(out.size(), 1u);

  const auto& w1 = m.weights().at("fc1.weight");
  const auto& b1 = m.weights().at("fc1.bias");
  const auto& w2 = m.weights().at("fc2.weight");
  const auto& b2 = m.weights().at("fc2.bias");
  std::vector<float> want(rows * 64);
  for (size_t r = 0; r < rows; ++r) {
    std::vector<float> h(256);
    for (size_t j = 0; j < 256; ++j) {
      double acc = b1[j];
      for (size_t k = 0; k < 64; ++k) acc += static_cast<double>(x[r * 64 + k]) * w1[k * 256 + j];
      h[j] = gelu(static_cast<float>(acc));
    }
    for (size_t j = 0; j < 64; ++j) {
      double acc = b2[j];
      for (size_t k = 0; k < 256; ++k) acc += static_cast<double>(h[k]) * w2[k * 64 + j];
      want[r * 64 + j] = static_cast<float>(acc);
    }
  }
  expect_close(out[0], want, 1e-5f, "mlp y");
}

TEST(BundledModels, EncoderGivesAFiniteUnitScaleEmbedding) {
  const Model m = load("encoder");
  const CompiledGraph g = compile_at(m, 19);
  std::vector<float> ids, mask;
  tokens(19, 19, 0.f, ids, mask);
  const auto out = run(g, ids, mask);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].size(), 128u);
  double sq = 0;
  for (float v : out[0]) {
    ASSERT_TRUE(std::isfinite(v));
    sq += static_cast<double>(v) * v;
  }
  // Mean of layer-normed rows: O(1) entries, not collapsed to zero, not blown up.
  const double rms = std::sqrt(sq / 128);
  EXPECT_GT(rms, 0.05);
  EXPECT_LT(rms, 3.0);
  // Different sentences give different embeddings.
  std::vector<float> ids2 = ids;
  std::reverse(ids2.begin(), ids2.begin() + 10);
  ids2[0] = 999;
  EXPECT_NE(run(g, ids2, mask)[0], out[0]);
}

TEST(BundledModels, EncoderPaddedToTheBucketEqualsExactLength) {
  const Model m = load("encoder");
  const CompiledGraph exact = compile_at(m, 19);
  const CompiledGraph bucket = compile_at(m, 32);
  std::vector<float> ids, mask;
  tokens(19, 19, 0.f, ids, mask);
  const auto want = run(exact, ids, mask)[0];
  // Padding ids are real vocabulary entries: only the mask keeps them out.
  for (float pad_id : {0.f, 7.f, 999.f}) {
    tokens(19, 32, pad_id, ids, mask);
    expect_close(run(bucket, ids, mask)[0], want, 1e-5f, "padded embedding");
  }
  // Without the mask the padding does change the embedding: the test above is not vacuous.
  tokens(19, 32, 7.f, ids, mask);
  std::fill(mask.begin(), mask.end(), 1.f);
  const auto unmasked = run(bucket, ids, mask)[0];
  float diff = 0;
  for (size_t i = 0; i < want.size(); ++i) diff = std::max(diff, std::fabs(unmasked[i] - want[i]));
  EXPECT_GT(diff, 1e-3f);
}

TEST(BundledModels, ClassifierIsTheEncoderPlusItsHead) {
  const Model enc = load("encoder"), cls = load("classifier");
  std::vector<float> ids, mask;
  tokens(11, 16, 3.f, ids, mask);
  const auto embedding = run(compile_at(enc, 16), ids, mask)[0];
  const auto logits = run(compile_at(cls, 16), ids, mask)[0];
  ASSERT_EQ(logits.size(), 8u);
  const auto& w = cls.weights().at("head.weight");
  const auto& b = cls.weights().at("head.bias");
  std::vector<float> want(8);
  for (size_t j = 0; j < 8; ++j) {
    double acc = b[j];
    for (size_t k = 0; k < 128; ++k) acc += static_cast<double>(embedding[k]) * w[k * 8 + j];
    want[j] = static_cast<float>(acc);
  }
  expect_close(logits, want, 1e-5f, "logits");
}

TEST(BundledModels, EncoderThroughTheBucketedCache) {
  // Model::build is what ensure_hir_with_params and run_padded take, unchanged.
  const Model m = load("encoder");
  auto cache = BucketedCompileCache::power_of_two_ladder(Device::Reference, 8, 64);
  int builds = 0;
  auto build = [&](uint64_t upper) {
    ++builds;
    return m.build(upper);
  };
  const auto entry = cache.ensure_hir_with_params(19, build, {});
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->upper, 32u);
  EXPECT_EQ(entry->graph->input_shape("ids"), (Shape{1, 32}));
  const auto again = cache.ensure_hir_with_params(25, build, {});  // same bucket: no build
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->graph, entry->graph);
  EXPECT_EQ(builds, 1);
  EXPECT_EQ(cache.compiled_count(), 1u);
  for (const auto& p : m.params()) EXPECT_TRUE(entry->graph->param_is_set(p.name)) << p.name;

  // ids and mask are [1, seq]: as [seq, 1] rows, run_padded pads them with zeros to the bucket.
  std::vector<float> ids, mask;
  tokens(19, 19, 0.f, ids, mask);
  const PaddedInput inputs[] = {{"ids", ids, 1}, {"mask", mask, 1}};
  const auto ran = cache.run_padded(19, 19, build, inputs, {});
  ASSERT_TRUE(ran.has_value());
  EXPECT_EQ(ran->upper, 32u);
  EXPECT_EQ(builds, 1);
  expect_close(ran->outputs.at(0), run(compile_at(m, 19), ids, mask)[0], 1e-5f, "cached embedding");
}

}  // namespace
}  // namespace rungs
