// wasm/bindings/adapters.hpp: the JavaScript-facing functions of the npm module, written against the
// public rungs headers only. Registration (register.cpp) binds these and nothing else.
//
// Conventions (api.md section 7):
//  - shapes are JS arrays of integers; values are Float32Array in and out (always copies: a view
//    into the wasm heap would go stale when memory grows);
//  - every rungs::Error (or other C++ exception) is caught here and rethrown as a JS Error with the
//    same message and `code` set to the ErrorCode name ("ShapeMismatch", ...). An exception that
//    escaped a bound function would reach JS as a bare number.
#pragma once

#include <emscripten/val.h>

#include <string>

#include "rungs/graph.hpp"
#include "rungs/session.hpp"
#include "rungs/types.hpp"

namespace rungs::wasm {

using emscripten::val;

std::string version();
std::string cpu_isa();  // the ISA Device::Cpu kernels dispatch to ("wasm")

// Graph
Value graph_input(Graph& graph, const std::string& name, const val& shape);
Value graph_param(Graph& graph, const std::string& name, const val& shape);
Value graph_relu(Graph& graph, Value x);
void graph_output(Graph& graph, const std::string& name, Value v);
val graph_shape(const Graph& graph, Value v);
std::string graph_to_text(const Graph& graph);

// Session
CompiledGraph session_compile(Session& session, const Graph& graph);

// CompiledGraph
val compiled_run(const CompiledGraph& compiled, const val& inputs);  // {name: Float32Array}
void compiled_set_param(CompiledGraph& compiled, const std::string& name, const val& data);
val compiled_input_names(const CompiledGraph& compiled);
val compiled_output_names(const CompiledGraph& compiled);
val compiled_input_shape(const CompiledGraph& compiled, const std::string& name);
val compiled_output_shape(const CompiledGraph& compiled, const std::string& name);
val compiled_report(const CompiledGraph& compiled);  // {isa, device, threads, arenaBytes, compileMs}

}  // namespace rungs::wasm
