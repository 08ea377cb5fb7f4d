// SPDX-License-Identifier: Apache-2.0
// TextEmbedder on Universal Sentence Encoder Lite (its TF.js graph model and vocab.json from
// tests/text/reference, installed by scripts/setup) against @energetic-ai/embeddings: the
// reference texts of up to 128 tokens through the default pow2 ladder, padded with the model's
// mask or active, never at exact length. Skips without the packages or the reference file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "rungs/embedder.hpp"
#include "rungs/model.hpp"
#include "rungs/text.hpp"
#include "text/use_reference.hpp"

namespace rungs {
namespace {

const std::string kDir = RUNGS_USE_MODEL_DIR;

using Ref = testing::UseReference;

std::vector<Ref> read_reference() { return testing::read_use_reference(RUNGS_USE_EMBEDDINGS); }

TEST(TextEmbedderUse, PaddedOrActiveRunsEqualTheReference) {
  if (!std::ifstream(kDir + "/model.json").good()) GTEST_SKIP() << "no " << kDir << "/model.json: run bash scripts/setup";
  const std::vector<Ref> refs = read_reference();
  if (refs.empty()) GTEST_SKIP() << "no " << RUNGS_USE_EMBEDDINGS << " (made at build time by use_embeddings.mjs)";
  for (bool active : {false, true}) {
    TextEmbedderOptions o;  // the default ladder: pow2 up to 128 tokens, where the model clips
    o.active_extent = active;
    TextEmbedder e(load_model(kDir + "/model.json"), text::UnigramTokenizer::load(kDir + "/vocab.json"), o);
    ASSERT_TRUE(e.has_mask()) << "USE Lite's frontend gives it a mask input (docs/tfjs.md)";
    EXPECT_EQ(e.width(), 512u);
    std::vector<std::string> texts;
    std::vector<Ref> kept;  // the texts the default ladder reaches (past 128 tokens: OutOfRange)
    const text::UnigramTokenizer tok = text::UnigramTokenizer::load(kDir + "/vocab.json");
    for (const Ref& r : refs) {
      if (tok.encode(r.text).size() > 128) continue;
      texts.push_back(r.text);
      kept.push_back(r);
    }
    ASSERT_GE(kept.size(), 200u);
    const std::vector<TextEmbedding> out = e.embed(texts);
    double max_abs = 0, min_cos = 1;
    size_t padded_below_bucket = 0;
    for (size_t i = 0; i < kept.size(); ++i) {
      EXPECT_NE(out[i].mode, EmbedMode::Exact) << kept[i].text;
      if (out[i].bucket > out[i].tokens) ++padded_below_bucket;
      double ab = 0, aa = 0, bb = 0, d = 0;
      for (size_t k = 0; k < 512; ++k) {
        d = std::max(d, std::fabs(static_cast<double>(out[i].vector[k]) - kept[i].embedding[k]));
        ab += static_cast<double>(out[i].vector[k]) * kept[i].embedding[k];
        aa += static_cast<double>(out[i].vector[k]) * out[i].vector[k];
        bb += static_cast<double>(kept[i].embedding[k]) * kept[i].embedding[k];
      }
      const double c = ab / std::sqrt(aa * bb);
      EXPECT_LE(d, 1e-4) << out[i].tokens << " tokens: " << kept[i].text;
      EXPECT_GE(c, 0.99999) << out[i].tokens << " tokens: " << kept[i].text;
      max_abs = std::max(max_abs, d);
      min_cos = std::min(min_cos, c);
    }
    EXPECT_GT(padded_below_bucket, kept.size() / 2);  // most texts really ran in a larger bucket
    EXPECT_FALSE(e.used_exact_fallback());
    EXPECT_EQ(e.exact_stats().runs, 0u);
    if (active) EXPECT_GT(e.stats().active_runs, 0u);
    std::printf("TextEmbedder on USE Lite, %zu texts, pow2 ladder%s: max abs %.3g, min cosine %.9f, %llu compiles\n",
                kept.size(), active ? " + active extent" : "", max_abs, min_cos,
                static_cast<unsigned long long>(e.stats().compiles));
  }
}

// Past 128 tokens the model clips: max_tokens = 128 runs the first 128 ids in the 128 bucket and
// gives the reference's embedding (no bucket past 128 compiled).
TEST(TextEmbedderUse, MaxTokensGivesTheEmbeddingOfALongText) {
  if (!std::ifstream(kDir + "/model.json").good()) GTEST_SKIP() << "no " << kDir << "/model.json: run bash scripts/setup";
  const std::vector<Ref> refs = read_reference();
  if (refs.empty()) GTEST_SKIP() << "no " << RUNGS_USE_EMBEDDINGS << " (made at build time by use_embeddings.mjs)";
  const text::UnigramTokenizer tok = text::UnigramTokenizer::load(kDir + "/vocab.json");
  TextEmbedderOptions o;
  o.max_tokens = 128;
  TextEmbedder e(load_model(kDir + "/model.json"), tok, o);
  size_t long_texts = 0;
  for (const Ref& r : refs) {
    if (tok.encode(r.text).size() <= 128) continue;
    ++long_texts;
    const TextEmbedding got = e.embed({r.text}).at(0);
    EXPECT_GT(got.tokens, 128u);
    EXPECT_EQ(got.bucket, 128u);
    double d = 0;
    for (size_t k = 0; k < 512; ++k) d = std::max(d, std::fabs(static_cast<double>(got.vector[k]) - r.embedding[k]));
    EXPECT_LE(d, 1e-4) << got.tokens << " tokens: " << r.text;
  }
  EXPECT_GE(long_texts, 10u);
  EXPECT_EQ(e.stats().compiles, 1u);
}

}  // namespace
}  // namespace rungs
