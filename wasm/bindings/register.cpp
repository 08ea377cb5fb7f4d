// SPDX-License-Identifier: Apache-2.0
// wasm/bindings/register.cpp: Embind registration of the npm module's API (api.md section 7:
// the C++ class names, camelCase methods). Only registration here: the adapters do the work, and
// index.js adds defaults for optional arguments, turns recorded errors into throws, guards build
// callbacks and groups the ladder functions. Raw names (`_`-prefixed) are index.js's only.
#include <emscripten/bind.h>

#include "adapters.hpp"

using namespace emscripten;

EMSCRIPTEN_BINDINGS(rungs) {
  using namespace rungs;
  using namespace rungs::wasm;

  function("version", &wasm::version);
  function("cpuIsa", &cpu_isa);
  function("heapStats", &heap_stats);
  function("padRows", &wasm::pad_rows);
  function("sliceRows", &wasm::slice_rows);

  function("_ladderHead", &ladder_head);
  function("_ladderValidate", &ladder_validate);
  function("_ladderPowerOfTwo", &ladder_power_of_two);
  function("_ladderGeometric", &ladder_geometric);
  function("_ladderLinear", &ladder_linear);
  function("_ladderFromExtents", &ladder_from_extents);
  function("_ladderWithHead", &ladder_with_head);
  function("_ladderOptimal", &ladder_optimal);
  function("_ladderExpectedWaste", &ladder_expected_waste);
  function("_ladderPaddedRows", &ladder_padded_rows);
  function("_ladderLognormalTrace", &ladder_lognormal_trace);

  enum_<Device>("Device").value("Cpu", Device::Cpu).value("Reference", Device::Reference);
  enum_<Activation>("Activation")
      .value("None", Activation::None)
      .value("Relu", Activation::Relu)
      .value("Gelu", Activation::Gelu)
      .value("GeluTanh", Activation::GeluTanh)
      .value("Silu", Activation::Silu)
      .value("Tanh", Activation::Tanh)
      .value("Sigmoid", Activation::Sigmoid);

  value_object<Value>("Value").field("id", &Value::id);

  class_<Graph>("Graph")
      .constructor<>()
      .class_function("fromJson", &graph_from_json)
      .function("input", &graph_input)
      .function("param", &graph_param)
      .function("constant", &graph_constant)
      .function("matmul", &graph_binary<&Graph::matmul>)
      .function("add", &graph_binary<&Graph::add>)
      .function("sub", &graph_binary<&Graph::sub>)
      .function("mul", &graph_binary<&Graph::mul>)
      .function("div", &graph_binary<&Graph::div>)
      .function("maximum", &graph_binary<&Graph::maximum>)
      .function("minimum", &graph_binary<&Graph::minimum>)
      .function("pow", &graph_binary<&Graph::pow>)
      .function("equal", &graph_binary<&Graph::equal>)
      .function("less", &graph_binary<&Graph::less>)
      .function("greater", &graph_binary<&Graph::greater>)
      .function("lessEqual", &graph_binary<&Graph::less_equal>)
      .function("greaterEqual", &graph_binary<&Graph::greater_equal>)
      .function("where", &graph_where)
      .function("relu", &graph_unary<&Graph::relu>)
      .function("gelu", &graph_unary<&Graph::gelu>)
      .function("geluTanh", &graph_unary<&Graph::gelu_tanh>)
      .function("silu", &graph_unary<&Graph::silu>)
      .function("sigmoid", &graph_unary<&Graph::sigmoid>)
      .function("tanh", &graph_unary<&Graph::tanh>)
      .function("exp", &graph_unary<&Graph::exp>)
      .function("log", &graph_unary<&Graph::log>)
      .function("sqrt", &graph_unary<&Graph::sqrt>)
      .function("rsqrt", &graph_unary<&Graph::rsqrt>)
      .function("neg", &graph_unary<&Graph::neg>)
      .function("abs", &graph_unary<&Graph::abs>)
      .function("erf", &graph_unary<&Graph::erf>)
      .function("sin", &graph_unary<&Graph::sin>)
      .function("cos", &graph_unary<&Graph::cos>)
      .function("logicalNot", &graph_unary<&Graph::logical_not>)
      .function("softmax", &graph_softmax)
      .function("layerNorm", &graph_layer_norm)
      .function("rmsNorm", &graph_rms_norm)
      .function("sum", &graph_reduce<&Graph::sum>)
      .function("mean", &graph_reduce<&Graph::mean>)
      .function("max", &graph_reduce<&Graph::max>)
      .function("reshape", &graph_reshape)
      .function("transpose", &graph_transpose)
      .function("slice", &graph_slice)
      .function("concat", &graph_concat)
      .function("gather", &graph_binary<&Graph::gather>)
      .function("attention", &graph_attention)
      .function("output", &graph_output)
      .function("shape", &graph_shape)
      .function("nodeCount", &Graph::node_count)
      .function("inputs", &graph_inputs)
      .function("outputs", &graph_outputs)
      .function("toText", &graph_to_text)
      .function("toJson", &graph_to_json);

  class_<HirModule>("HirModule")
      .constructor<>()
      .function("input", &hir_input)
      .function("linear", &hir_linear)
      .function("layerNorm", &hir_layer_norm)
      .function("rmsNorm", &hir_rms_norm)
      .function("selfAttention", &hir_self_attention)
      .function("mlp", &hir_mlp)
      .function("embedding", &hir_embedding)
      .function("meanPool", &hir_mean_pool)
      .function("add", &hir_add)
      .function("output", &hir_output)
      .function("shape", &hir_shape)
      .function("lower", &hir_lower)
      .function("params", &hir_params);

  class_<CompiledGraph>("CompiledGraph")
      .smart_ptr<GraphPtr>("CompiledGraphPtr")
      .function("run", &compiled_run)
      .function("_runStaged", &compiled_run_staged)
      .function("runRows", &compiled_run_rows)
      .function("setParam", &compiled_set_param)
      .function("inputNames", &compiled_input_names)
      .function("outputNames", &compiled_output_names)
      .function("inputShape", &compiled_input_shape)
      .function("outputShape", &compiled_output_shape)
      .function("paramNames", &compiled_param_names)
      .function("paramShape", &compiled_param_shape)
      .function("paramIsSet", &compiled_param_is_set)
      .function("report", &compiled_report)
      .function("profile", &compiled_profile)
      .function("prepareActiveRows", &compiled_prepare_active_rows)
      .function("activeRowsSupported", &compiled_active_rows_supported)
      .function("activeRowsReason", &compiled_active_rows_reason)
      .function("elementsComputed", &compiled_elements_computed);

  class_<Session>("Session")
      .constructor<Device>()
      .function("withPolicy", &session_with_policy)
      .function("compile", &session_compile)
      .function("compileHir", &session_compile_hir);

  class_<JsCache>("BucketedCompileCache")
      .constructor(&cache_new, allow_raw_pointers())
      .class_function("withPolicy", &cache_with_policy, allow_raw_pointers())
      .class_function("powerOfTwoLadder", &cache_power_of_two, allow_raw_pointers())
      .class_function("powerOfTwoLadderWithPolicy", &cache_power_of_two_with_policy, allow_raw_pointers())
      .function("_getOrCompile", &cache_get_or_compile)
      .function("_ensureWithParams", &cache_ensure_with_params)
      .function("_runPadded", &cache_run_padded)
      .function("_runPaddedMixed", &cache_run_padded_mixed)
      .function("_runPaddedStaged", &cache_run_padded_staged)
      .function("bucketFor", &cache_bucket_for)
      .function("buckets", &cache_buckets)
      .function("compiledCount", &cache_compiled_count)
      .function("totalBuckets", &cache_total_buckets)
      .function("setActiveExtent", &cache_set_active_extent)
      .function("activeExtent", &cache_active_extent)
      .function("stats", &cache_stats)
      .function("statsJson", &cache_stats_json)
      .function("device", &cache_device)
      .function("policy", &cache_policy);

  class_<Model>("Model")
      .class_function("parse", &model_parse, allow_raw_pointers())
      .function("name", &Model::name)
      .function("bucketDim", &Model::bucket_dim)
      .function("description", &Model::description)
      .function("inputs", &model_inputs)
      .function("outputNames", &model_output_names)
      .function("inputLayouts", &model_input_layouts)
      .function("outputInners", &model_output_inners)
      .function("syntheticInputs", &model_synthetic_inputs)
      .function("params", &model_params)
      .function("paramCount", &model_param_count)
      .function("hasWeights", &Model::has_weights)
      .function("build", &model_build)
      .function("buildModule", &model_build_module)
      .function("toJson", &model_to_json)
      .function("weightsBytes", &wasm::model_weights_bytes);
  function("loadModel", &model_load, allow_raw_pointers());

  class_<text::UnigramTokenizer>("UnigramTokenizer")
      .class_function("parse", &unigram_parse, allow_raw_pointers())
      .function("encode", &unigram_encode)
      .function("piece", &unigram_piece)
      .function("vocabSize", &unigram_vocab_size);
  class_<text::WordPieceTokenizer>("WordPieceTokenizer")
      .class_function("parseVocabTxt", &wordpiece_parse_vocab_txt, allow_raw_pointers())
      .class_function("parseTokenizerJson", &wordpiece_parse_tokenizer_json, allow_raw_pointers())
      .function("tokenize", &wordpiece_tokenize)
      .function("encode", &wordpiece_encode)
      .function("encodePair", &wordpiece_encode_pair)
      .function("tokenToId", &wordpiece_token_to_id)
      .function("idToToken", &wordpiece_id_to_token)
      .function("vocabSize", &wordpiece_vocab_size);
  function("_loadOnnx", &model_load_onnx, allow_raw_pointers());
  function("loadTfjs", &model_load_tfjs, allow_raw_pointers());

  class_<JsTextEmbedder>("TextEmbedder")
      .constructor(&embedder_new, allow_raw_pointers())
      .function("embed", &embedder_embed)
      .function("embedDetailed", &embedder_embed_detailed)
      .function("tokenCounts", &embedder_token_counts)
      .function("stats", &embedder_stats)
      .function("buckets", &embedder_buckets)
      .function("usedExactFallback", &embedder_used_exact_fallback)
      .function("hasMask", &embedder_has_mask)
      .function("width", &embedder_width);
}
