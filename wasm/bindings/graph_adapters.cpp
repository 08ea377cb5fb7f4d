// SPDX-License-Identifier: Apache-2.0
// Graph, HirModule, Session and CompiledGraph adapters (see adapters.hpp).
#include <emscripten/emscripten.h>

#include <span>
#include <string>
#include <utility>
#include <vector>

#include "adapters.hpp"

// run()'s fast path (index.js, CompiledGraph.run): when every input is a Float32Array of its
// compiled size, named once and nothing else, JS hands them over in input_names() order in
// Module.rungsStagedIn and calls _runStaged. Each input is then copied once, by TypedArray.set,
// straight into the run's workspace, and each output once out of it, into Module.rungsStagedOut
// (run) or into the caller's own arrays in Module.rungsStagedInto (runInto: no allocation).
// Nothing crosses the boundary but two integers per tensor: the Embind `val` path this replaced
// (type checks, Object.keys, a property read and a method call per input, each a JS round trip)
// cost about 8 us per call, the whole of a 4 x 4 matmul's run. wasmMemory.buffer, not HEAPF32:
// in the threaded build another thread may have grown the memory since this thread's views.
// clang-format off
EM_JS(void, rungs_staged_fill, (size_t k, float* dest, size_t n), {
  new Float32Array(wasmMemory.buffer, dest >>> 0, n).set(Module["rungsStagedIn"][k]);
});
EM_JS(void, rungs_staged_take, (size_t j, const float* values, size_t n), {
  const view = new Float32Array(wasmMemory.buffer, values >>> 0, n);
  const into = Module["rungsStagedInto"];
  if (into) into[j].set(view);
  else Module["rungsStagedOut"][j] = view.slice();
});
// clang-format on

namespace rungs::wasm {
namespace {

std::optional<Value> to_optional_value(const val& v, const std::string& what) {
  if (is_nullish(v)) return std::nullopt;
  if (v.typeOf().as<std::string>() != "object" || !v["id"].isNumber()) {
    fail(ErrorCode::InvalidArgument, what + " must be a Value ({id}) or null");
  }
  return Value{static_cast<uint32_t>(to_u64(v["id"], what + ".id"))};
}

// {name: Float32Array | BigInt64Array | Int32Array | Uint8Array} -> the named views run() takes;
// `data` owns the copies.
std::vector<NamedInput> to_named_inputs(const val& inputs, std::vector<std::string>& names,
                                        std::vector<OwnedTensor>& data, const std::string& what) {
  if (inputs.typeOf().as<std::string>() != "object" || inputs.isNull() || inputs.isArray()) {
    fail(ErrorCode::InvalidArgument, what + ": inputs must be an object {name: Float32Array}");
  }
  const val keys = val::global("Object").call<val>("keys", inputs);
  const unsigned n = keys["length"].as<unsigned>();
  names.resize(n);
  data.resize(n);
  for (unsigned i = 0; i < n; ++i) {
    names[i] = keys[i].as<std::string>();
    data[i] = to_tensor(inputs[names[i]], what + ": input '" + names[i] + "'");
  }
  std::vector<NamedInput> named(n);
  for (unsigned i = 0; i < n; ++i) named[i] = {names[i], data[i].view()};
  return named;
}

}  // namespace

// ---- Graph ----------------------------------------------------------------------------------

Graph graph_from_json(const std::string& text) {
  return guarded([&] { return Graph::from_json(text); });
}

Value graph_input(Graph& graph, const std::string& name, const val& shape) {
  return guarded([&] { return graph.input(name, to_shape(shape, "input '" + name + "'")); });
}

Value graph_param(Graph& graph, const std::string& name, const val& shape) {
  return guarded([&] { return graph.param(name, to_shape(shape, "param '" + name + "'")); });
}

Value graph_constant(Graph& graph, const val& data, const val& shape) {
  return guarded([&] { return graph.constant(to_floats(data, "constant: data"), to_shape(shape, "constant")); });
}

Value graph_softmax(Graph& graph, Value x, int axis) {
  return guarded([&] { return graph.softmax(x, axis); });
}

Value graph_layer_norm(Graph& graph, Value x, Value gamma, Value beta, float eps) {
  return guarded([&] { return graph.layer_norm(x, gamma, beta, eps); });
}

Value graph_rms_norm(Graph& graph, Value x, Value gamma, float eps) {
  return guarded([&] { return graph.rms_norm(x, gamma, eps); });
}

Value graph_reshape(Graph& graph, Value x, const val& shape) {
  return guarded([&] { return graph.reshape(x, to_shape(shape, "reshape")); });
}

Value graph_transpose(Graph& graph, Value x, const val& perm) {
  return guarded([&] { return graph.transpose(x, to_ints(perm, "transpose: perm")); });
}

Value graph_slice(Graph& graph, Value x, int axis, const val& start, const val& length) {
  return guarded([&] {
    return graph.slice(x, axis, to_i64(start, "slice: start"), to_i64(length, "slice: length"));
  });
}

Value graph_concat(Graph& graph, const val& xs, int axis) {
  return guarded([&] {
    if (!xs.isArray()) fail(ErrorCode::InvalidArgument, "concat: xs must be an array of Values");
    std::vector<Value> values;
    const unsigned n = xs["length"].as<unsigned>();
    for (unsigned i = 0; i < n; ++i) {
      const auto v = to_optional_value(xs[i], "concat: xs[" + std::to_string(i) + "]");
      if (!v) fail(ErrorCode::InvalidArgument, "concat: xs[" + std::to_string(i) + "] is null");
      values.push_back(*v);
    }
    return graph.concat(std::move(values), axis);
  });
}

Value graph_attention(Graph& graph, Value q, Value k, Value v, const val& options) {
  return guarded([&] {
    AttentionOptions o;
    if (!is_nullish(options)) {
      if (options.typeOf().as<std::string>() != "object") {
        fail(ErrorCode::InvalidArgument, "attention: options must be {heads, causal, keyMask, scale}");
      }
      if (!options["heads"].isUndefined()) o.heads = static_cast<int>(to_i64(options["heads"], "attention: heads"));
      if (!options["causal"].isUndefined()) o.causal = options["causal"].isTrue();
      o.key_mask = to_optional_value(options["keyMask"], "attention: keyMask");
      if (!is_nullish(options["scale"])) {
        if (!options["scale"].isNumber()) fail(ErrorCode::InvalidArgument, "attention: scale must be a number");
        o.scale = options["scale"].as<float>();
      }
    }
    return graph.attention(q, k, v, o);
  });
}

void graph_output(Graph& graph, const std::string& name, Value v) {
  guarded([&] { graph.output(name, v); });
}

val graph_shape(const Graph& graph, Value v) {
  return guarded([&] { return from_shape(graph.shape(v)); });
}

val graph_inputs(const Graph& graph) {
  return guarded([&] { return from_named_shapes(graph.inputs()); });
}

val graph_outputs(const Graph& graph) {
  return guarded([&] { return from_named_shapes(graph.outputs()); });
}

std::string graph_to_text(const Graph& graph) {
  return guarded([&] { return graph.to_text(); });
}

std::string graph_to_json(const Graph& graph) {
  return guarded([&] { return graph.to_json(); });
}

// ---- HirModule ------------------------------------------------------------------------------

Value hir_input(HirModule& module, const std::string& name, const val& shape) {
  return guarded([&] { return module.input(name, to_shape(shape, "input '" + name + "'")); });
}

Value hir_linear(HirModule& module, Value x, const std::string& name, const val& out_features, Activation act,
                 bool bias) {
  return guarded([&] {
    return module.linear(x, name, to_i64(out_features, "linear '" + name + "': outFeatures"), act, bias);
  });
}

Value hir_layer_norm(HirModule& module, Value x, const std::string& name, float eps) {
  return guarded([&] { return module.layer_norm(x, name, eps); });
}

Value hir_rms_norm(HirModule& module, Value x, const std::string& name, float eps) {
  return guarded([&] { return module.rms_norm(x, name, eps); });
}

Value hir_self_attention(HirModule& module, Value x, const std::string& name, int heads, const val& key_mask,
                         bool causal) {
  return guarded([&] {
    return module.self_attention(x, name, heads, to_optional_value(key_mask, "selfAttention: keyMask"), causal);
  });
}

Value hir_mlp(HirModule& module, Value x, const std::string& name, const val& hidden, Activation act) {
  return guarded([&] { return module.mlp(x, name, to_i64(hidden, "mlp '" + name + "': hidden"), act); });
}

Value hir_embedding(HirModule& module, Value ids, const std::string& name, const val& vocab, const val& dim) {
  return guarded([&] {
    return module.embedding(ids, name, to_i64(vocab, "embedding: vocab"), to_i64(dim, "embedding: dim"));
  });
}

Value hir_mean_pool(HirModule& module, Value x, const val& mask) {
  return guarded([&] { return module.mean_pool(x, to_optional_value(mask, "meanPool: mask")); });
}

Value hir_add(HirModule& module, Value a, Value b) {
  return guarded([&] { return module.add(a, b); });
}

void hir_output(HirModule& module, const std::string& name, Value v) {
  guarded([&] { module.output(name, v); });
}

val hir_shape(const HirModule& module, Value v) {
  return guarded([&] { return from_shape(module.shape(v)); });
}

Graph hir_lower(const HirModule& module) {
  return guarded([&] { return module.lower(); });
}

val hir_params(const HirModule& module) {
  return guarded([&] { return from_named_shapes(module.params()); });
}

// ---- Session --------------------------------------------------------------------------------

void session_with_policy(Session& session, const val& policy) {
  guarded([&] {
    const auto p = to_policy(policy, "withPolicy: policy");
    if (!p) fail(ErrorCode::InvalidArgument, "withPolicy: policy must not be null");
    session.with_policy(*p);
  });
}

GraphPtr session_compile(Session& session, const Graph& graph, const val& options) {
  return guarded([&] {
    return std::make_shared<CompiledGraph>(session.compile(graph, to_options(options, "compile: options")));
  });
}

GraphPtr session_compile_hir(Session& session, const HirModule& module, const val& options) {
  return guarded([&] {
    return std::make_shared<CompiledGraph>(session.compile_hir(module, to_options(options, "compileHir: options")));
  });
}

// ---- CompiledGraph --------------------------------------------------------------------------

val compiled_run(const CompiledGraph& compiled, const val& inputs) {
  return guarded([&] {
    std::vector<std::string> names;
    std::vector<OwnedTensor> data;
    return from_outputs(compiled.run(to_named_inputs(inputs, names, data, "run")));
  });
}

void compiled_run_staged(const CompiledGraph& compiled) {
  guarded([&] {
    compiled.run_in_place([](size_t k, std::span<float> dest) { rungs_staged_fill(k, dest.data(), dest.size()); },
                          [](size_t j, std::span<const float> values) {
                            rungs_staged_take(j, values.data(), values.size());
                          });
  });
}

val compiled_run_rows(const CompiledGraph& compiled, const val& inputs, const val& rows) {
  return guarded([&] {
    std::vector<std::string> names;
    std::vector<OwnedTensor> data;
    const auto named = to_named_inputs(inputs, names, data, "runRows");
    return from_outputs(compiled.run_rows(named, to_i64(rows, "runRows: rows")));
  });
}

void compiled_set_param(CompiledGraph& compiled, const std::string& name, const val& data) {
  guarded([&] { compiled.set_param(name, to_floats(data, "setParam: param '" + name + "'")); });
}

val compiled_input_names(const CompiledGraph& compiled) {
  return guarded([&] { return from_strings(compiled.input_names()); });
}

val compiled_output_names(const CompiledGraph& compiled) {
  return guarded([&] { return from_strings(compiled.output_names()); });
}

val compiled_input_shape(const CompiledGraph& compiled, const std::string& name) {
  return guarded([&] { return from_shape(compiled.input_shape(name)); });
}

val compiled_output_shape(const CompiledGraph& compiled, const std::string& name) {
  return guarded([&] { return from_shape(compiled.output_shape(name)); });
}

val compiled_param_names(const CompiledGraph& compiled) {
  return guarded([&] { return from_strings(compiled.param_names()); });
}

val compiled_param_shape(const CompiledGraph& compiled, const std::string& name) {
  return guarded([&] { return from_shape(compiled.param_shape(name)); });
}

bool compiled_param_is_set(const CompiledGraph& compiled, const std::string& name) {
  return guarded([&] { return compiled.param_is_set(name); });
}

val compiled_profile(const CompiledGraph& compiled, const val& inputs, int repetitions) {
  return guarded([&] {
    std::vector<std::string> names;
    std::vector<OwnedTensor> data;
    const std::vector<KernelProfile> prof = compiled.profile(to_named_inputs(inputs, names, data, "profile"), repetitions);
    val out = val::array();
    for (size_t i = 0; i < prof.size(); ++i) {
      val k = val::object();
      k.set("op", prof[i].op);
      k.set("kernel", prof[i].kernel);
      k.set("shape", from_shape(prof[i].shape));
      k.set("ms", prof[i].ms);
      k.set("flops", prof[i].flops);
      k.set("bytes", prof[i].bytes);
      out.set(i, k);
    }
    return out;
  });
}

val compiled_report(const CompiledGraph& compiled) {
  return guarded([&] {
    const CompileReport& r = compiled.report();
    val passes = val::array();
    for (size_t i = 0; i < r.passes.size(); ++i) {
      const PassReport& p = r.passes[i];
      val pass = val::object();
      pass.set("name", p.name);
      pass.set("ms", p.ms);
      pass.set("nodesBefore", static_cast<double>(p.nodes_before));
      pass.set("nodesAfter", static_cast<double>(p.nodes_after));
      pass.set("changed", p.changed);
      pass.set("irAfter", p.ir_after);
      passes.set(i, pass);
    }
    val kernels = val::array();
    for (size_t i = 0; i < r.kernels.size(); ++i) {
      val kernel = val::object();
      kernel.set("op", r.kernels[i].op);
      kernel.set("kernel", r.kernels[i].kernel);
      kernel.set("shape", from_shape(r.kernels[i].shape));
      kernel.set("rowSegment", r.kernels[i].row_segment);
      kernels.set(i, kernel);
    }
    val out = val::object();
    out.set("isa", r.isa);
    out.set("device", to_string(r.device));
    out.set("policy", r.policy);
    out.set("threads", r.threads);
    out.set("passes", passes);
    out.set("kernels", kernels);
    out.set("arenaBytes", static_cast<double>(r.arena_bytes));
    out.set("intermediateBytes", static_cast<double>(r.intermediate_bytes));
    out.set("paramBytes", static_cast<double>(r.param_bytes));
    out.set("compileMs", r.compile_ms);
    out.set("text", r.to_text());
    return out;
  });
}

bool compiled_prepare_active_rows(CompiledGraph& compiled, const val& extent) {
  return guarded([&] { return compiled.prepare_active_rows(to_i64(extent, "prepareActiveRows: extent")); });
}

bool compiled_active_rows_supported(const CompiledGraph& compiled) {
  return guarded([&] { return compiled.active_rows_supported(); });
}

std::string compiled_active_rows_reason(const CompiledGraph& compiled) {
  return guarded([&] { return compiled.active_rows_reason(); });
}

double compiled_elements_computed(const CompiledGraph& compiled) {
  return guarded([&] { return static_cast<double>(compiled.elements_computed()); });
}

}  // namespace rungs::wasm
