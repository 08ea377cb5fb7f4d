// SPDX-License-Identifier: Apache-2.0
// TextEmbedder (rungs/embedder.hpp): tokenizer + text model + bucketed cache, and the exact
// cache a model without a padding mask falls back to.
#include "rungs/embedder.hpp"

#include <atomic>
#include <mutex>
#include <optional>
#include <utility>

#include "rungs/error.hpp"

namespace rungs {

std::string_view to_string(EmbedMode mode) {
  switch (mode) {
    case EmbedMode::Padded:
      return "padded";
    case EmbedMode::Active:
      return "active";
    case EmbedMode::Exact:
      return "exact";
  }
  return "?";
}

namespace {

constexpr uint64_t kDefaultMaxTokens = 128;

// A text for an error message: its first 40 bytes (whole UTF-8 characters), quoted.
std::string preview(std::string_view text) {
  constexpr size_t kMax = 40;
  if (text.size() <= kMax) return "'" + std::string(text) + "'";
  size_t cut = kMax;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return "'" + std::string(text.substr(0, cut)) + "...'";
}

std::string input_list(const Model& model) {
  std::string out;
  const auto inputs = model.inputs(1);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputRole role = model.input_role(i);
    out += (i ? ", '" : "'") + inputs[i].name + "' (" +
           (role == InputRole::Ids ? "ids" : role == InputRole::Mask ? "mask"
                                                                     : "values") +
           ")";
  }
  return out.empty() ? "no inputs" : out;
}

}  // namespace

struct TextEmbedder::Impl {
  Model model;
  Tokenize tokenize;
  BucketedCompileCache cache;
  BucketedCompileCache exact;  // one bucket per length, for a model without a mask
  size_t ids_input = 0;
  std::optional<size_t> mask_input;
  std::vector<size_t> inners;
  size_t width = 0;
  uint64_t max_tokens = 0;  // 0: no clip
  std::function<void(const std::string&)> on_exact;
  std::atomic<bool> used_exact = false;
  std::mutex mutex;  // embed runs one call at a time

  Impl(Model m, Tokenize t, BucketedCompileCache c, BucketedCompileCache e)
      : model(std::move(m)), tokenize(std::move(t)), cache(std::move(c)), exact(std::move(e)) {}
};

namespace {

std::vector<Range> ladder_or_default(const TextEmbedderOptions& o) {
  if (o.ladder.empty()) return ladder::power_of_two(1, kDefaultMaxTokens);
  ladder::validate(o.ladder, "TextEmbedder: ladder");
  return o.ladder;
}

// One bucket per length 1..last extent of `ladder`.
std::vector<Range> exact_ladder(std::span<const Range> ladder) {
  const uint64_t max = ladder.back().end - 1;
  std::vector<Range> out;
  out.reserve(max);
  for (uint64_t n = 1; n <= max; ++n) out.push_back({n, n + 1});
  return out;
}

}  // namespace

TextEmbedder::TextEmbedder(Model model, text::UnigramTokenizer tokenizer, TextEmbedderOptions options)
    : TextEmbedder(
          std::move(model), [tok = std::move(tokenizer)](std::string_view text) { return tok.encode(text); },
          std::move(options)) {}

namespace {

struct TextInputs {
  size_t ids = 0;
  std::optional<size_t> mask;
};

TextInputs text_inputs(const Model& model) {
  const std::string expected =
      " is not a text model with one input of token ids (and at most one padding mask, each one value per "
      "token, and an output: such as Universal Sentence Encoder Lite's model.json, docs/tfjs.md); its inputs: ";
  const auto layouts = model.input_layouts(1);
  std::optional<size_t> ids, mask;
  bool ok = !model.output_names().empty() && !model.bucket_dim().empty();
  for (size_t i = 0; i < layouts.size() && ok; ++i) {
    const InputRole role = model.input_role(i);
    std::optional<size_t>& slot = role == InputRole::Ids ? ids : mask;
    ok = role != InputRole::Values && !slot && layouts[i].follows_bucket && layouts[i].row_values == size_t{1};
    slot = i;
  }
  if (!ok || !ids) throw Error(ErrorCode::Unsupported, "TextEmbedder: model '" + model.name() + "'" + expected + input_list(model));
  return {*ids, mask};
}

}  // namespace

void TextEmbedder::check_model(const Model& model) { text_inputs(model); }

TextEmbedder::TextEmbedder(Model model, Tokenize tokenize, TextEmbedderOptions options) {
  if (!tokenize) throw Error(ErrorCode::InvalidArgument, "TextEmbedder: no tokenizer given");
  const std::vector<Range> ladder = ladder_or_default(options);
  const TextInputs io = text_inputs(model);
  BucketedCompileCache cache(options.device, ladder);
  cache.set_active_extent(options.active_extent);
  BucketedCompileCache exact(options.device, exact_ladder(ladder));
  impl_ = std::make_unique<Impl>(std::move(model), std::move(tokenize), std::move(cache), std::move(exact));
  impl_->max_tokens = options.max_tokens;
  impl_->ids_input = io.ids;
  impl_->mask_input = io.mask;
  impl_->inners = impl_->model.output_inners();
  impl_->width = static_cast<size_t>(shape_numel(impl_->model.output_layouts(1).at(0).shape));
}

TextEmbedder::TextEmbedder(TextEmbedder&&) noexcept = default;
TextEmbedder& TextEmbedder::operator=(TextEmbedder&&) noexcept = default;
TextEmbedder::~TextEmbedder() = default;

std::vector<size_t> TextEmbedder::token_counts(std::span<const std::string> texts) const {
  std::vector<size_t> out;
  out.reserve(texts.size());
  for (const std::string& t : texts) out.push_back(impl_->tokenize(t).size());
  return out;
}

std::vector<TextEmbedding> TextEmbedder::embed(std::initializer_list<std::string> texts) {
  return embed(std::span<const std::string>(texts.begin(), texts.size()));
}

std::vector<TextEmbedding> TextEmbedder::embed(std::span<const std::string> texts) {
  Impl& s = *impl_;
  const auto buckets = s.cache.buckets();
  const uint64_t ladder_max = buckets.back().end - 1;
  auto in_ladder = [&](uint64_t n) {
    for (const Range& r : buckets)
      if (n >= r.start && n < r.end) return true;
    return false;
  };
  // Every text is tokenized and checked before anything runs.
  std::vector<std::vector<int32_t>> ids;
  std::vector<size_t> counts;  // before max_tokens
  ids.reserve(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    ids.push_back(s.tokenize(texts[i]));
    counts.push_back(ids.back().size());
    if (s.max_tokens > 0 && ids.back().size() > s.max_tokens) ids.back().resize(s.max_tokens);
    const std::string which = "TextEmbedder.embed: text " + std::to_string(i + 1) + " (" + preview(texts[i]) + ")";
    if (ids.back().empty()) throw Error(ErrorCode::InvalidArgument, which + " has no tokens");
    if (!in_ladder(ids.back().size())) {
      throw Error(ErrorCode::OutOfRange, which + " has " + std::to_string(ids.back().size()) + " tokens, " +
                                             (ids.back().size() > ladder_max ? "past the ladder's last bucket (" +
                                                                                   std::to_string(ladder_max) + " tokens)"
                                                                             : std::string("in no bucket of the ladder")) +
                                             "; give a ladder that reaches it");
    }
  }

  std::lock_guard lock(s.mutex);
  auto build = [&](uint64_t upper) { return s.model.build(upper); };
  const size_t n_inputs = s.mask_input ? 2 : 1;
  const bool active = s.cache.active_extent();
  std::vector<TextEmbedding> out;
  out.reserve(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    const size_t len = ids[i].size();
    std::vector<std::vector<float>> data(n_inputs);
    data[s.ids_input] = std::vector<float>(ids[i].begin(), ids[i].end());
    if (s.mask_input) data[*s.mask_input] = std::vector<float>(len, 1.0f);  // the cache pads it with zeros
    const auto in = s.model.cache_inputs(data);
    auto run = s.cache.run_padded_mixed(len, len, build, in, s.inners);
    if (!run) throw Error(ErrorCode::Internal, "TextEmbedder.embed: no bucket for " + std::to_string(len) + " tokens");
    TextEmbedding e;
    e.tokens = counts[i];
    e.bucket = run->upper;
    e.mode = run->mode == RunMode::Active ? EmbedMode::Active : EmbedMode::Padded;
    if (e.mode == EmbedMode::Padded && e.bucket != len && !s.mask_input) {
      // Padding reaches this model's output: run the text at its exact length instead.
      if (!s.used_exact) {
        s.used_exact = true;
        if (s.on_exact) {
          s.on_exact("the cache would pad a text (" + std::to_string(len) + " tokens in the bucket at " +
                     std::to_string(e.bucket) + (active ? ", active extent refused for this model" : "") +
                     "); the model has no padding mask, so padded texts run at their exact length instead");
        }
      }
      run = s.exact.run_padded_mixed(len, len, build, in, s.inners);
      e.bucket = run->upper;
      e.mode = EmbedMode::Exact;
    }
    e.vector = std::move(run->outputs.at(0));
    out.push_back(std::move(e));
  }
  return out;
}

void TextEmbedder::on_exact_fallback(std::function<void(const std::string&)> callback) {
  std::lock_guard lock(impl_->mutex);
  impl_->on_exact = std::move(callback);
}
bool TextEmbedder::used_exact_fallback() const { return impl_->used_exact; }
bool TextEmbedder::has_mask() const { return impl_->mask_input.has_value(); }
size_t TextEmbedder::width() const { return impl_->width; }
std::span<const Range> TextEmbedder::buckets() const { return impl_->cache.buckets(); }
CacheStats TextEmbedder::stats() const { return impl_->cache.stats(); }
CacheStats TextEmbedder::exact_stats() const { return impl_->exact.stats(); }
const Model& TextEmbedder::model() const { return impl_->model; }

}  // namespace rungs
