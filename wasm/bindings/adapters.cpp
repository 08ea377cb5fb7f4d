#include "adapters.hpp"

#include <emscripten/emscripten.h>

#include <cmath>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "rungs/error.hpp"
#include "rungs/version.hpp"

namespace rungs::wasm {
namespace {

// The message and code of the exception being rethrown. Static so that nothing with a destructor
// is alive in the C++ frame when the JS throw unwinds through it (JS unwinding runs no C++
// destructors).
std::string g_error_message;
std::string g_error_code;

}  // namespace
}  // namespace rungs::wasm

// clang-format off
EM_JS(void, rungs_throw_js_error, (const char* message, const char* code), {
  const error = new Error(UTF8ToString(message));
  error.code = UTF8ToString(code);
  throw error;
});
// clang-format on

namespace rungs::wasm {
namespace {

[[noreturn]] void throw_stashed() {
  rungs_throw_js_error(g_error_message.c_str(), g_error_code.c_str());
  __builtin_unreachable();
}

// Runs f; a C++ exception leaves f (its destructors run), then becomes a JS Error.
template <class F>
auto guarded(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error& e) {
    g_error_message = e.what();
    g_error_code = std::string(to_string(e.code()));
  } catch (const std::exception& e) {
    g_error_message = e.what();
    g_error_code = "Internal";
  }
  throw_stashed();
}

[[noreturn]] void fail(ErrorCode code, const std::string& message) { throw Error(code, message); }

Shape to_shape(const val& shape, const std::string& what) {
  if (!shape.isArray()) fail(ErrorCode::InvalidArgument, what + ": shape must be an array of integers");
  Shape out;
  const unsigned n = shape["length"].as<unsigned>();
  for (unsigned i = 0; i < n; ++i) {
    const val d = shape[i];
    const double x = d.isNumber() ? d.as<double>() : NAN;
    if (!(std::isfinite(x) && std::floor(x) == x)) {
      fail(ErrorCode::InvalidArgument,
           what + ": shape[" + std::to_string(i) + "] is not an integer");
    }
    out.push_back(static_cast<int64_t>(x));
  }
  return out;
}

val from_shape(const Shape& shape) {
  val out = val::array();
  for (size_t i = 0; i < shape.size(); ++i) out.set(i, static_cast<double>(shape[i]));
  return out;
}

val from_strings(const std::vector<std::string>& names) {
  val out = val::array();
  for (size_t i = 0; i < names.size(); ++i) out.set(i, names[i]);
  return out;
}

bool is_float32_array(const val& v) { return v.instanceof(val::global("Float32Array")); }

std::vector<float> to_floats(const val& data, const std::string& what) {
  if (!is_float32_array(data)) fail(ErrorCode::InvalidArgument, what + " must be a Float32Array");
  return emscripten::convertJSArrayToNumberVector<float>(data);
}

val to_float32_array(const std::vector<float>& data) {
  // new Float32Array(view) copies out of the heap.
  return val::global("Float32Array").new_(emscripten::typed_memory_view(data.size(), data.data()));
}

}  // namespace

std::string version() { return std::string(rungs::version()); }

std::string cpu_isa() {
  return guarded([] {
    static const std::string isa = [] {
      Graph graph;
      graph.output("y", graph.relu(graph.input("x", {16})));
      return Session(Device::Cpu).compile(graph).report().isa;
    }();
    return isa;
  });
}

Value graph_input(Graph& graph, const std::string& name, const val& shape) {
  return guarded([&] { return graph.input(name, to_shape(shape, "input '" + name + "'")); });
}

Value graph_param(Graph& graph, const std::string& name, const val& shape) {
  return guarded([&] { return graph.param(name, to_shape(shape, "param '" + name + "'")); });
}

Value graph_relu(Graph& graph, Value x) {
  return guarded([&] { return graph.relu(x); });
}

void graph_output(Graph& graph, const std::string& name, Value v) {
  guarded([&] { graph.output(name, v); });
}

val graph_shape(const Graph& graph, Value v) {
  return guarded([&] { return from_shape(graph.shape(v)); });
}

std::string graph_to_text(const Graph& graph) {
  return guarded([&] { return graph.to_text(); });
}

CompiledGraph session_compile(Session& session, const Graph& graph) {
  return guarded([&] { return session.compile(graph); });
}

val compiled_run(const CompiledGraph& compiled, const val& inputs) {
  return guarded([&] {
    if (inputs.typeOf().as<std::string>() != "object" || inputs.isNull() || inputs.isArray()) {
      fail(ErrorCode::InvalidArgument, "run: inputs must be an object {name: Float32Array}");
    }
    const val keys = val::global("Object").call<val>("keys", inputs);
    const unsigned n = keys["length"].as<unsigned>();
    std::vector<std::string> names(n);
    std::vector<std::vector<float>> data(n);
    for (unsigned i = 0; i < n; ++i) {
      names[i] = keys[i].as<std::string>();
      data[i] = to_floats(inputs[names[i]], "run: input '" + names[i] + "'");
    }
    std::vector<NamedInput> named(n);
    for (unsigned i = 0; i < n; ++i) named[i] = {names[i], data[i]};
    const auto outputs = compiled.run(named);
    val out = val::array();
    for (size_t i = 0; i < outputs.size(); ++i) out.set(i, to_float32_array(outputs[i]));
    return out;
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

val compiled_report(const CompiledGraph& compiled) {
  return guarded([&] {
    const CompileReport& r = compiled.report();
    val out = val::object();
    out.set("isa", r.isa);
    out.set("device", to_string(r.device));
    out.set("threads", r.threads);
    out.set("arenaBytes", static_cast<double>(r.arena_bytes));
    out.set("compileMs", r.compile_ms);
    return out;
  });
}

}  // namespace rungs::wasm
