// SPDX-License-Identifier: Apache-2.0
// wasm/bindings/convert.hpp: conversions between JS values and rungs types, and `guarded`, which
// turns every C++ exception into a thrown JS Error. Shared by the adapters; nothing here is bound.
//
// Conventions (api.md section 7):
//  - shapes, axes and key lists are JS arrays of integers; keys, extents and row counts are JS
//    numbers holding integers in [0, 2^53];
//  - values are Float32Array in and out, always copied: in with one TypedArray.set into the wasm
//    heap, out with one `new Float32Array(view)` (a view into the heap would go stale when memory
//    grows);
//  - std::nullopt is `null`; optional arguments are `undefined` or `null`;
//  - every rungs::Error (or other C++ exception) is caught in the bound function (`guarded`),
//    which records its message and ErrorCode name and returns normally with an empty value;
//    index.js wraps every bound function and throws the recorded error as a JS Error (message,
//    and `code` = "ShapeMismatch", ...). Nothing is thrown through wasm frames in either
//    direction: one escaping C++ would reach JS as an opaque WebAssembly.Exception, with no
//    message or code, and a JS exception unwinding C++ frames leaves whatever they were doing
//    (a compile, a cache's bucket) half done.
#pragma once

#include <emscripten/val.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "rungs/error.hpp"
#include "rungs/ladder.hpp"
#include "rungs/session.hpp"
#include "rungs/types.hpp"

namespace rungs::wasm {

using emscripten::val;

// Records the exception being handled for index.js to throw (call inside a catch block).
void record_current_exception();

// Runs f. On a C++ exception: records it (f's destructors have run) and returns an empty value.
template <class F>
auto guarded(F&& f) -> decltype(f()) {
  using R = decltype(f());
  try {
    return f();
  } catch (...) {
    record_current_exception();
  }
  if constexpr (std::is_same_v<R, val>) {
    return val::undefined();
  } else if constexpr (!std::is_void_v<R>) {
    return R{};
  }
}

[[noreturn]] void fail(ErrorCode code, const std::string& message);

// JS -> C++ (`what` starts every error message, e.g. "runPadded: key")
uint64_t to_u64(const val& v, const std::string& what);  // an integer in [0, 2^53]
int64_t to_i64(const val& v, const std::string& what);   // an integer in [-2^53, 2^53]
Shape to_shape(const val& shape, const std::string& what);
std::vector<int> to_ints(const val& list, const std::string& what);
std::vector<uint64_t> to_keys(const val& list, const std::string& what);  // array or typed array
std::vector<float> to_floats(const val& data, const std::string& what);   // a Float32Array
// A run input's values in the JS type they came in: Float32Array, BigInt64Array, Int32Array or
// Uint8Array (bool: 0 false, anything else true), copied; view() is what the run APIs take
// (converted to f32 exactly there: an integer past 2^24 is an InvalidArgument naming the input).
struct OwnedTensor {
  std::variant<std::vector<float>, std::vector<int64_t>, std::vector<int32_t>, std::vector<uint8_t>> values;
  TensorView view() const;
  size_t size() const;
};
OwnedTensor to_tensor(const val& data, const std::string& what);
std::vector<uint8_t> to_bytes(const val& data, const std::string& what);  // a Uint8Array
std::vector<Range> to_ranges(const val& list, const std::string& what);   // [{start, end}]
std::optional<PrecisionPolicy> to_policy(const val& v, const std::string& what);  // name or null
CompileOptions to_options(const val& v, const std::string& what);  // {fusion, threads, ...}
ParamMap to_param_map(const val& v, const std::string& what);      // object or Map of Float32Array
bool is_nullish(const val& v);

// C++ -> JS
val from_shape(const Shape& shape);
val from_strings(const std::vector<std::string>& names);
val from_floats(const std::vector<float>& data);  // a new Float32Array (a copy)
val from_outputs(const std::vector<std::vector<float>>& outputs);  // Float32Array[]
val from_ranges(const std::vector<Range>& ranges);
val from_named_shapes(const std::vector<std::pair<std::string, Shape>>& list);  // [{name, shape}]
val from_param_map(const ParamMap& params);  // {name: Float32Array}
val from_policy(const std::optional<PrecisionPolicy>& policy);

}  // namespace rungs::wasm
