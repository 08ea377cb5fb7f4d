// SPDX-License-Identifier: Apache-2.0
// wasm/bindings/adapters.hpp: the JavaScript-facing functions of the npm module, written against
// the public rungs headers only. register.cpp binds these and nothing else; index.js wraps them
// (defaults for optional arguments, errors thrown, build callbacks guarded, Symbol.dispose).
// Conversions and error conventions: convert.hpp.
#pragma once

#include <emscripten/val.h>

#include <memory>
#include <string>

#include "convert.hpp"
#include "rungs/cache.hpp"
#include "rungs/embedder.hpp"
#include "rungs/graph.hpp"
#include "rungs/hir.hpp"
#include "rungs/model.hpp"
#include "rungs/session.hpp"
#include "rungs/text.hpp"
#include "rungs/types.hpp"

namespace rungs::wasm {

// ---- module ---------------------------------------------------------------------------------
std::string version();
std::string cpu_isa();  // the ISA Device::Cpu kernels dispatch to ("wasm")
val heap_stats();       // {heapBytes, allocatedBytes}
val pad_rows(const val& data, const val& inner, const val& upper);
val slice_rows(const val& data, const val& inner, const val& actual);

// ---- ladder (rungs::ladder) -----------------------------------------------------------------
val ladder_head();
void ladder_validate(const val& buckets, const std::string& who);
val ladder_power_of_two(const val& min, const val& max, bool head);
val ladder_geometric(const val& min, const val& max, double ratio, bool head);
val ladder_linear(const val& min, const val& max, const val& step, bool head);
val ladder_from_extents(const val& extents, bool head);
val ladder_with_head(const val& ladder, const val& head);  // head: array or undefined
val ladder_optimal(const val& keys, const val& max_buckets);
double ladder_expected_waste(const val& buckets, const val& keys);
double ladder_padded_rows(const val& buckets, const val& keys);
val ladder_lognormal_trace(double median, const val& count, const val& max, const val& seed, double sigma);

// ---- Graph ----------------------------------------------------------------------------------
template <Value (Graph::*Op)(Value)>
Value graph_unary(Graph& graph, Value x) {
  return guarded([&] { return (graph.*Op)(x); });
}
template <Value (Graph::*Op)(Value, Value)>
Value graph_binary(Graph& graph, Value a, Value b) {
  return guarded([&] { return (graph.*Op)(a, b); });
}
inline Value graph_where(Graph& graph, Value cond, Value a, Value b) {
  return guarded([&] { return graph.where(cond, a, b); });
}
template <Value (Graph::*Op)(Value, std::vector<int>, bool)>
Value graph_reduce(Graph& graph, Value x, const val& axes, bool keep_dims) {
  return guarded([&] { return (graph.*Op)(x, to_ints(axes, "reduce: axes"), keep_dims); });
}
Graph graph_from_json(const std::string& text);
Value graph_input(Graph& graph, const std::string& name, const val& shape);
Value graph_param(Graph& graph, const std::string& name, const val& shape);
Value graph_constant(Graph& graph, const val& data, const val& shape);
Value graph_softmax(Graph& graph, Value x, int axis);
Value graph_layer_norm(Graph& graph, Value x, Value gamma, Value beta, float eps);
Value graph_rms_norm(Graph& graph, Value x, Value gamma, float eps);
Value graph_reshape(Graph& graph, Value x, const val& shape);
Value graph_transpose(Graph& graph, Value x, const val& perm);
Value graph_slice(Graph& graph, Value x, int axis, const val& start, const val& length);
Value graph_concat(Graph& graph, const val& xs, int axis);
Value graph_attention(Graph& graph, Value q, Value k, Value v, const val& options);
void graph_output(Graph& graph, const std::string& name, Value v);
val graph_shape(const Graph& graph, Value v);
val graph_inputs(const Graph& graph);
val graph_outputs(const Graph& graph);
std::string graph_to_text(const Graph& graph);
std::string graph_to_json(const Graph& graph);

// ---- HirModule ------------------------------------------------------------------------------
Value hir_input(HirModule& module, const std::string& name, const val& shape);
Value hir_linear(HirModule& module, Value x, const std::string& name, const val& out_features, Activation act,
                 bool bias);
Value hir_layer_norm(HirModule& module, Value x, const std::string& name, float eps);
Value hir_rms_norm(HirModule& module, Value x, const std::string& name, float eps);
Value hir_self_attention(HirModule& module, Value x, const std::string& name, int heads, const val& key_mask,
                         bool causal);
Value hir_mlp(HirModule& module, Value x, const std::string& name, const val& hidden, Activation act);
Value hir_embedding(HirModule& module, Value ids, const std::string& name, const val& vocab, const val& dim);
Value hir_mean_pool(HirModule& module, Value x, const val& mask);
Value hir_add(HirModule& module, Value a, Value b);
void hir_output(HirModule& module, const std::string& name, Value v);
val hir_shape(const HirModule& module, Value v);
Graph hir_lower(const HirModule& module);
val hir_params(const HirModule& module);

// ---- Session and CompiledGraph ----------------------------------------------------------------
// JS handles of compiled graphs hold a shared_ptr: Session.compile's own, or one that aliases the
// cache that owns a bucket's graph (so the graph outlives a deleted cache while a handle lives).
using GraphPtr = std::shared_ptr<CompiledGraph>;
void session_with_policy(Session& session, const val& policy);
GraphPtr session_compile(Session& session, const Graph& graph, const val& options);
GraphPtr session_compile_hir(Session& session, const HirModule& module, const val& options);

val compiled_run(const CompiledGraph& compiled, const val& inputs);  // {name: Float32Array}
void compiled_run_staged(const CompiledGraph& compiled);             // run()'s fast path, see index.js
val compiled_run_rows(const CompiledGraph& compiled, const val& inputs, const val& rows);
void compiled_set_param(CompiledGraph& compiled, const std::string& name, const val& data);
val compiled_input_names(const CompiledGraph& compiled);
val compiled_output_names(const CompiledGraph& compiled);
val compiled_input_shape(const CompiledGraph& compiled, const std::string& name);
val compiled_output_shape(const CompiledGraph& compiled, const std::string& name);
val compiled_param_names(const CompiledGraph& compiled);
val compiled_param_shape(const CompiledGraph& compiled, const std::string& name);
bool compiled_param_is_set(const CompiledGraph& compiled, const std::string& name);
val compiled_report(const CompiledGraph& compiled);
val compiled_profile(const CompiledGraph& compiled, const val& inputs, int repetitions);
bool compiled_prepare_active_rows(CompiledGraph& compiled, const val& extent);
bool compiled_active_rows_supported(const CompiledGraph& compiled);
std::string compiled_active_rows_reason(const CompiledGraph& compiled);
double compiled_elements_computed(const CompiledGraph& compiled);

// Module.rungsStagedIn[k] copied into dest (n floats); n floats at values made Module.rungsStagedOut[j]
// (a new Float32Array), or copied into Module.rungsStagedInto[j] when that is set (graph_adapters.cpp).
extern "C" void rungs_staged_fill(size_t k, float* dest, size_t n);
extern "C" void rungs_staged_take(size_t j, const float* values, size_t n);

// ---- BucketedCompileCache ---------------------------------------------------------------------
// The JS class: a shared handle, so that bucket graphs handed out can keep the cache alive.
struct JsCache {
  std::shared_ptr<BucketedCompileCache> cache;
};
JsCache* cache_new(Device device, const val& buckets);
JsCache* cache_with_policy(Device device, const val& buckets, const val& policy);
JsCache* cache_power_of_two(Device device, const val& min, const val& max);
JsCache* cache_power_of_two_with_policy(Device device, const val& min, const val& max, const val& policy);
// kind: what build returns ("graph", "hir"; "graphParams" and "hirParams" for the ensure_* pair).
val cache_get_or_compile(JsCache& js, const val& key, const val& build, const val& options);
val cache_ensure_with_params(JsCache& js, const val& key, const val& build, const val& options);
val cache_bucket_for(const JsCache& js, const val& key);
val cache_buckets(const JsCache& js);
double cache_compiled_count(const JsCache& js);
double cache_total_buckets(const JsCache& js);
val cache_run_padded(JsCache& js, const val& key, const val& actual_rows, const val& build, const val& inputs,
                     const val& output_inners);
val cache_run_padded_mixed(JsCache& js, const val& key, const val& actual_rows, const val& build,
                           const val& inputs, const val& output_inners);
// runPadded's fast path (index.js): each input's values staged in Module.rungsStagedIn (Float32Arrays)
// and copied once into the run, its name in `names` ('\0' after each), its size and inner in
// `numbers` ([inputs, (values, inner) per input, outputs, inner per output]); the outputs go to
// Module.rungsStagedOut. Returns -1 when the key is in no bucket, else upper * 2 + 1 for an active
// run and upper * 2 for a padded one. The checks and messages are runPadded's.
double cache_run_padded_staged(JsCache& js, double key, double actual_rows, const val& build, const std::string& names,
                               const val& numbers);
void cache_set_active_extent(JsCache& js, bool on);
bool cache_active_extent(const JsCache& js);
val cache_stats(const JsCache& js);
val from_cache_stats(const CacheStats& stats);  // what BucketedCompileCache.stats() returns
std::string cache_stats_json(const JsCache& js);
Device cache_device(const JsCache& js);
val cache_policy(const JsCache& js);

// ---- Model ----------------------------------------------------------------------------------
Model* model_load(const val& json, const val& safetensors, const std::string& source);
Model* model_load_onnx(const val& onnx, const val& options, const std::string& source);
val model_input_layouts(const Model& model, const val& extent);
val model_output_inners(const Model& model);
val model_synthetic_inputs(const Model& model, const val& rows, const val& seed);
Model* model_parse(const std::string& json, const std::string& source);
val model_inputs(const Model& model, const val& extent);
val model_output_names(const Model& model);
val model_params(const Model& model);
double model_param_count(const Model& model);
val model_build(const Model& model, const val& extent);  // [HirModule, {name: Float32Array}]
HirModule model_build_module(const Model& model, const val& extent);
std::string model_to_json(const Model& model, const std::string& weights_file);
val model_weights_bytes(const Model& model, const std::string& dtype);

// ---- tokenizers (rungs::text) ----------------------------------------------------------------
text::UnigramTokenizer* unigram_parse(const std::string& json, const std::string& source);
val unigram_encode(const text::UnigramTokenizer& tok, const std::string& text);  // Int32Array
std::string unigram_piece(const text::UnigramTokenizer& tok, const val& id);
double unigram_vocab_size(const text::UnigramTokenizer& tok);
text::WordPieceTokenizer* wordpiece_parse_vocab_txt(const std::string& text, const val& options, const std::string& source);
text::WordPieceTokenizer* wordpiece_parse_tokenizer_json(const std::string& json, const std::string& source);
val wordpiece_tokenize(const text::WordPieceTokenizer& tok, const std::string& text);  // string[]
// {ids, tokens, tokenTypeIds, attentionMask}, the id lists as Int32Array
val wordpiece_encode(const text::WordPieceTokenizer& tok, const std::string& text, bool add_special_tokens);
val wordpiece_encode_pair(const text::WordPieceTokenizer& tok, const std::string& text, const std::string& pair,
                          bool add_special_tokens);
val wordpiece_token_to_id(const text::WordPieceTokenizer& tok, const std::string& token);  // number or null
std::string wordpiece_id_to_token(const text::WordPieceTokenizer& tok, const val& id);
double wordpiece_vocab_size(const text::WordPieceTokenizer& tok);

// ---- TextEmbedder (rungs/embedder.hpp) and TF.js models --------------------------------------
Model* model_load_tfjs(const val& model_json, const val& shards, const std::string& name);
// The JS class: an empty handle when construction failed (Embind needs an object back).
struct JsTextEmbedder {
  std::unique_ptr<TextEmbedder> embedder;
};
// options: {ladder, device, activeExtent, maxTokens}, as index.js checked and defaulted them
JsTextEmbedder* embedder_new(const Model& model, const text::UnigramTokenizer& tokenizer, const val& options);
val embedder_embed(JsTextEmbedder& js, const val& texts);           // Float32Array[]
val embedder_embed_detailed(JsTextEmbedder& js, const val& texts);  // TextEmbedding[]
val embedder_token_counts(const JsTextEmbedder& js, const val& texts);
val embedder_stats(const JsTextEmbedder& js);
val embedder_buckets(const JsTextEmbedder& js);
bool embedder_used_exact_fallback(const JsTextEmbedder& js);
bool embedder_has_mask(const JsTextEmbedder& js);
double embedder_width(const JsTextEmbedder& js);

}  // namespace rungs::wasm
