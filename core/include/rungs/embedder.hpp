// SPDX-License-Identifier: Apache-2.0
// rungs/embedder.hpp: texts to sentence embeddings. A TextEmbedder holds a text model (one input
// of token ids, optionally one padding mask), its tokenizer and a bucketed compile cache, and
// runs each text through the cache (docs/tfjs.md, "TextEmbedder").
//
//   rungs::Model use = rungs::load_model("node_modules/.../model.json");
//   auto vocab = rungs::text::UnigramTokenizer::load("node_modules/.../vocab.json");
//   rungs::TextEmbedder embedder(std::move(use), vocab);
//   std::vector<rungs::TextEmbedding> out = embedder.embed({"a sentence", "another one"});
//   // out[0].vector: 512 floats; out[0].tokens, .bucket, .mode say how the cache ran it
//
// A model with a Mask-role input is padded exactly: the embedder gives ones for the mask and the
// cache pads it with zeros. A model without one (a padded text would give another embedding)
// runs every text the cache would pad at its exact length instead, in a second cache of one
// bucket per length (mode Exact); active extent, where the model supports it, is exact already.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rungs/cache.hpp"
#include "rungs/ladder.hpp"
#include "rungs/model.hpp"
#include "rungs/text.hpp"
#include "rungs/types.hpp"

namespace rungs {

// How the cache ran a text. Padded: in its bucket's graph at the bucket's extent, inputs padded
// (tokens == bucket, or a model that masks its padding). Active: only the text's rows
// (active extent). Exact: at its own length in the exact cache (a model without a mask).
enum class EmbedMode {
  Padded,
  Active,
  Exact
};
std::string_view to_string(EmbedMode mode);  // "padded", "active", "exact"

struct TextEmbedderOptions {
  std::vector<Range> ladder;  // empty: ladder::power_of_two(1, 128) (USE Lite clips at 128 tokens)
  Device device = Device::Cpu;
  bool active_extent = true;
};

struct TextEmbedding {
  size_t tokens = 0;    // token ids of the text
  uint64_t bucket = 0;  // the extent it ran at: the bucket's upper, or its length in mode Exact
  EmbedMode mode = EmbedMode::Padded;
  std::vector<float> vector;  // the model's first output
};

class TextEmbedder {
 public:
  // text -> token ids (any tokenizer). Called from embed and token_counts only.
  using Tokenize = std::function<std::vector<int32_t>(std::string_view)>;

  // Checks the model: exactly one InputRole::Ids input and at most one InputRole::Mask input,
  // both following the bucket dim one value per row, and at least one output; else
  // Error(Unsupported) naming the inputs. Error(InvalidArgument) for a ladder the cache refuses.
  TextEmbedder(Model model, text::UnigramTokenizer tokenizer, TextEmbedderOptions options = {});
  TextEmbedder(Model model, Tokenize tokenize, TextEmbedderOptions options = {});
  // The constructor's check of the model alone (Error(Unsupported) naming its inputs).
  static void check_model(const Model& model);
  TextEmbedder(TextEmbedder&&) noexcept;
  TextEmbedder& operator=(TextEmbedder&&) noexcept;
  ~TextEmbedder();

  // One embedding per text, in order. Errors name the text by its position (from 1) and leave
  // the embedder usable: Error(InvalidArgument) for a text without tokens (empty, or only
  // spaces), Error(OutOfRange) for one with more tokens than the ladder's last bucket. Texts are
  // checked before any runs. Calls from several threads take turns.
  std::vector<TextEmbedding> embed(std::span<const std::string> texts);
  std::vector<TextEmbedding> embed(std::initializer_list<std::string> texts);
  // Token counts only (no model run), for planning a ladder.
  std::vector<size_t> token_counts(std::span<const std::string> texts) const;

  // Called once, the first time a text runs in mode Exact (a model without a mask that the
  // cache would pad), with a sentence saying so; the CLI prints it. Default: nothing.
  void on_exact_fallback(std::function<void(const std::string& message)> callback);
  bool used_exact_fallback() const;

  bool has_mask() const;  // the model has a Mask-role input: padded runs are exact
  size_t width() const;   // values of one embedding (the model's first output at extent 1)
  std::span<const Range> buckets() const;
  CacheStats stats() const;        // the bucketed cache's
  CacheStats exact_stats() const;  // the exact cache's (runs only for a model without a mask)
  const Model& model() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rungs
