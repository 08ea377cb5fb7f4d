// SPDX-License-Identifier: Apache-2.0
// TextEmbedder (rungs/embedder.hpp) and TF.js graph models for JavaScript (see adapters.hpp).
// Texts cross as JS strings (UTF-8 in C++), embeddings come back as Float32Array copies.
#include <string>
#include <vector>

#include "adapters.hpp"

namespace rungs::wasm {
namespace {

std::vector<std::string> to_texts(const val& texts, const std::string& what) {
  if (!texts.isArray()) fail(ErrorCode::InvalidArgument, what + ": expected an array of strings");
  const auto n = texts["length"].as<size_t>();
  std::vector<std::string> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const val t = texts[i];
    if (!t.isString()) fail(ErrorCode::InvalidArgument, what + "[" + std::to_string(i) + "]: expected a string");
    out.push_back(t.as<std::string>());
  }
  return out;
}

TextEmbedder& embedder_of(const JsTextEmbedder& js) {
  if (!js.embedder) fail(ErrorCode::InvalidArgument, "TextEmbedder: this embedder failed to construct");
  return *js.embedder;
}

}  // namespace

Model* model_load_tfjs(const val& model_json, const val& shards, const std::string& name) {
  return guarded([&]() -> Model* {
    std::string text;
    if (model_json.isString()) {
      text = model_json.as<std::string>();
    } else {
      const auto bytes = to_bytes(model_json, "loadTfjs: modelJson (a string or Uint8Array)");
      text.assign(bytes.begin(), bytes.end());
    }
    if (!shards.isArray()) fail(ErrorCode::InvalidArgument, "loadTfjs: shards must be an array of Uint8Array");
    std::vector<std::vector<uint8_t>> data;
    const auto n = shards["length"].as<size_t>();
    for (size_t i = 0; i < n; ++i) data.push_back(to_bytes(shards[i], "loadTfjs: shards[" + std::to_string(i) + "]"));
    return new Model(load_model_from_tfjs(text, data, name));
  });
}

JsTextEmbedder* embedder_new(const Model& model, const text::UnigramTokenizer& tokenizer, const val& options) {
  JsTextEmbedder* js = guarded([&]() -> JsTextEmbedder* {
    TextEmbedderOptions o;
    if (!options["ladder"].isNull()) o.ladder = to_ranges(options["ladder"], "TextEmbedder: options.ladder");
    o.device = options["device"].as<Device>();
    o.active_extent = options["activeExtent"].as<bool>();
    return new JsTextEmbedder{std::make_unique<TextEmbedder>(model, tokenizer, std::move(o))};
  });
  return js ? js : new JsTextEmbedder{};
}

val embedder_embed(JsTextEmbedder& js, const val& texts) {
  return guarded([&] {
    const auto out = embedder_of(js).embed(to_texts(texts, "TextEmbedder.embed: texts"));
    val list = val::array();
    for (size_t i = 0; i < out.size(); ++i) list.set(i, from_floats(out[i].vector));
    return list;
  });
}

val embedder_embed_detailed(JsTextEmbedder& js, const val& texts) {
  return guarded([&] {
    const std::vector<std::string> in = to_texts(texts, "TextEmbedder.embedDetailed: texts");
    const auto out = embedder_of(js).embed(in);
    val list = val::array();
    for (size_t i = 0; i < out.size(); ++i) {
      val e = val::object();
      e.set("text", in[i]);
      e.set("tokens", static_cast<double>(out[i].tokens));
      e.set("bucket", static_cast<double>(out[i].bucket));
      e.set("mode", std::string(to_string(out[i].mode)));
      e.set("embedding", from_floats(out[i].vector));
      list.set(i, e);
    }
    return list;
  });
}

val embedder_token_counts(const JsTextEmbedder& js, const val& texts) {
  return guarded([&] {
    const auto counts = embedder_of(js).token_counts(to_texts(texts, "TextEmbedder.tokenCounts: texts"));
    val list = val::array();
    for (size_t i = 0; i < counts.size(); ++i) list.set(i, static_cast<double>(counts[i]));
    return list;
  });
}

val embedder_stats(const JsTextEmbedder& js) {
  return guarded([&] { return from_cache_stats(embedder_of(js).stats()); });
}

val embedder_buckets(const JsTextEmbedder& js) {
  return guarded([&] {
    const auto b = embedder_of(js).buckets();
    return from_ranges(std::vector<Range>(b.begin(), b.end()));
  });
}

bool embedder_used_exact_fallback(const JsTextEmbedder& js) {
  return guarded([&] { return embedder_of(js).used_exact_fallback(); });
}
bool embedder_has_mask(const JsTextEmbedder& js) {
  return guarded([&] { return embedder_of(js).has_mask(); });
}
double embedder_width(const JsTextEmbedder& js) {
  return guarded([&] { return static_cast<double>(embedder_of(js).width()); });
}

}  // namespace rungs::wasm
