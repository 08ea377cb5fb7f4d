// SPDX-License-Identifier: Apache-2.0
#include "convert.hpp"

#include <emscripten/emscripten.h>

#include <cmath>
#include <exception>
#include <string>

namespace rungs::wasm {
namespace {

constexpr double kMaxSafeInteger = 9007199254740992.0;  // 2^53

bool is_instance(const val& v, const char* global_class) {
  return v.instanceof(val::global(global_class));
}

std::string with_article(const std::string& noun) {
  const bool vowel = !noun.empty() && std::string("AEIOUaeiou").find(noun[0]) != std::string::npos;
  return (vowel ? "an " : "a ") + noun;
}

// What a JS value is, for messages: "null", "undefined", "an array", "an Int32Array", "a Graph",
// "an object", "a string", "a number", ...
std::string type_name(const val& v) {
  if (v.isNull()) return "null";
  if (v.isUndefined()) return "undefined";
  if (v.isArray()) return "an array";
  const std::string type = v.typeOf().as<std::string>();
  if (type == "object") {
    const val ctor = v["constructor"];
    if (ctor.typeOf().as<std::string>() == "function" && ctor["name"].isString()) {
      const std::string name = ctor["name"].as<std::string>();
      if (!name.empty() && name != "Object") return with_article(name);
    }
    return "an object";
  }
  return with_article(type);
}

// A hint for values that are numbers of another kind: an array or another typed array.
std::string convert_hint(const val& v, const char* target) {
  if (v.isArray() || val::global("ArrayBuffer").call<bool>("isView", v)) {
    return std::string(" (copy it into one: ") + target + ".from(values))";
  }
  return "";
}

double to_integer(const val& v, double lo, const std::string& what) {
  const double x = v.isNumber() ? v.as<double>() : NAN;
  if (!(std::isfinite(x) && std::floor(x) == x && x >= lo && x <= kMaxSafeInteger)) {
    const std::string got = v.isNumber() ? std::to_string(x) : type_name(v);
    fail(ErrorCode::InvalidArgument, what + " must be an integer in [" + (lo < 0 ? "-2^53" : "0") +
                                         ", 2^53], got " + got);
  }
  return x;
}

std::vector<val> elements(const val& list, const std::string& what) {
  if (!list.isArray()) fail(ErrorCode::InvalidArgument, what + " must be an array, got " + type_name(list));
  const unsigned n = list["length"].as<unsigned>();
  std::vector<val> out;
  out.reserve(n);
  for (unsigned i = 0; i < n; ++i) out.push_back(list[i]);
  return out;
}

}  // namespace
}  // namespace rungs::wasm

// clang-format off
EM_JS(void, rungs_record_error, (const char* message, const char* code), {
  Module["rungsPendingError"] = { message: UTF8ToString(message), code: UTF8ToString(code) };
});
// clang-format on

namespace rungs::wasm {

void record_current_exception() {
  try {
    throw;
  } catch (const Error& e) {
    rungs_record_error(e.what(), std::string(to_string(e.code())).c_str());
  } catch (const std::bad_alloc&) {
    rungs_record_error("out of memory: the wasm heap could not grow to hold this allocation",
                       "OutOfRange");
  } catch (const std::exception& e) {
    rungs_record_error(e.what(), "Internal");
  } catch (...) {
    rungs_record_error("unknown C++ exception", "Internal");
  }
}

void fail(ErrorCode code, const std::string& message) { throw Error(code, message); }

bool is_nullish(const val& v) { return v.isNull() || v.isUndefined(); }

uint64_t to_u64(const val& v, const std::string& what) {
  return static_cast<uint64_t>(to_integer(v, 0, what));
}

int64_t to_i64(const val& v, const std::string& what) {
  return static_cast<int64_t>(to_integer(v, -kMaxSafeInteger, what));
}

Shape to_shape(const val& shape, const std::string& what) {
  Shape out;
  const auto items = elements(shape, what + ": shape");
  for (size_t i = 0; i < items.size(); ++i) {
    out.push_back(to_i64(items[i], what + ": shape[" + std::to_string(i) + "]"));
  }
  return out;
}

std::vector<int> to_ints(const val& list, const std::string& what) {
  std::vector<int> out;
  const auto items = elements(list, what);
  for (size_t i = 0; i < items.size(); ++i) {
    const int64_t x = to_i64(items[i], what + "[" + std::to_string(i) + "]");
    if (x < INT32_MIN || x > INT32_MAX) {
      fail(ErrorCode::InvalidArgument, what + "[" + std::to_string(i) + "] is out of the int range");
    }
    out.push_back(static_cast<int>(x));
  }
  return out;
}

std::vector<uint64_t> to_keys(const val& list, const std::string& what) {
  if (list.isArray()) {
    std::vector<uint64_t> out;
    const auto items = elements(list, what);
    out.reserve(items.size());
    for (size_t i = 0; i < items.size(); ++i) out.push_back(to_u64(items[i], what + "[" + std::to_string(i) + "]"));
    return out;
  }
  if (is_instance(list, "Uint32Array") || is_instance(list, "Uint16Array") || is_instance(list, "Uint8Array")) {
    // One bulk copy through a typed view; unsigned 32-bit values need no checks.
    const auto keys = emscripten::convertJSArrayToNumberVector<uint32_t>(list);
    return {keys.begin(), keys.end()};
  }
  fail(ErrorCode::InvalidArgument, what + " must be an array of integers or a Uint32Array, got " + type_name(list));
}

std::vector<float> to_floats(const val& data, const std::string& what) {
  if (!is_instance(data, "Float32Array")) {
    fail(ErrorCode::InvalidArgument,
         what + " must be a Float32Array, got " + type_name(data) + convert_hint(data, "Float32Array"));
  }
  return emscripten::convertJSArrayToNumberVector<float>(data);  // one TypedArray.set
}

TensorView OwnedTensor::view() const {
  return std::visit(
      [](const auto& v) -> TensorView {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::vector<uint8_t>>) return TensorView::bool_bytes(v);
        else return TensorView(v);
      },
      values);
}

size_t OwnedTensor::size() const {
  return std::visit([](const auto& v) { return v.size(); }, values);
}

OwnedTensor to_tensor(const val& data, const std::string& what) {
  OwnedTensor t;
  if (is_instance(data, "Float32Array")) {
    t.values = emscripten::convertJSArrayToNumberVector<float>(data);
  } else if (is_instance(data, "Int32Array")) {
    t.values = emscripten::convertJSArrayToNumberVector<int32_t>(data);
  } else if (is_instance(data, "Uint8Array")) {
    t.values = emscripten::convertJSArrayToNumberVector<uint8_t>(data);
  } else if (is_instance(data, "BigInt64Array")) {
    // Copied as its 32-bit halves (little-endian, as wasm): a bulk TypedArray.set needs no BigInt
    // support in the module, which Emscripten 3.1.6 builds without.
    const unsigned n = data["length"].as<unsigned>();
    const val halves = val::global("Int32Array").new_(data["buffer"], data["byteOffset"], val(2 * n));
    const auto words = emscripten::convertJSArrayToNumberVector<int32_t>(halves);
    std::vector<int64_t> v(n);
    for (unsigned i = 0; i < n; ++i)
      v[i] = static_cast<int64_t>((static_cast<uint64_t>(static_cast<uint32_t>(words[2 * i + 1])) << 32) |
                                  static_cast<uint32_t>(words[2 * i]));
    t.values = std::move(v);
  } else {
    fail(ErrorCode::InvalidArgument, what + " must be a Float32Array, BigInt64Array, Int32Array or Uint8Array (bool), got " +
                                         type_name(data) + convert_hint(data, "Float32Array"));
  }
  return t;
}

std::vector<uint8_t> to_bytes(const val& data, const std::string& what) {
  if (!is_instance(data, "Uint8Array")) {
    fail(ErrorCode::InvalidArgument,
         what + " must be a Uint8Array, got " + type_name(data) + convert_hint(data, "Uint8Array"));
  }
  return emscripten::convertJSArrayToNumberVector<uint8_t>(data);
}

std::vector<Range> to_ranges(const val& list, const std::string& what) {
  std::vector<Range> out;
  const auto items = elements(list, what);
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string at = what + "[" + std::to_string(i) + "]";
    if (items[i].typeOf().as<std::string>() != "object" || items[i].isNull()) {
      fail(ErrorCode::InvalidArgument, at + " must be {start, end}, got " + type_name(items[i]));
    }
    out.push_back({to_u64(items[i]["start"], at + ".start"), to_u64(items[i]["end"], at + ".end")});
  }
  return out;
}

std::optional<PrecisionPolicy> to_policy(const val& v, const std::string& what) {
  if (is_nullish(v)) return std::nullopt;
  const std::string name = v.isString() ? v.as<std::string>() : "";
  for (const auto policy : {PrecisionPolicy::f32(), PrecisionPolicy::bf16_weights(), PrecisionPolicy::f16_weights()}) {
    if (name == policy.name()) return policy;
  }
  fail(ErrorCode::InvalidArgument,
       what + " must be 'f32', 'bf16_weights', 'f16_weights' or null, got " + (v.isString() ? "'" + name + "'" : type_name(v)));
}

CompileOptions to_options(const val& v, const std::string& what) {
  CompileOptions options;
  if (is_nullish(v)) return options;
  if (v.typeOf().as<std::string>() != "object") {
    fail(ErrorCode::InvalidArgument, what + " must be an object {fusion, threads, policy, dumpPasses, maxArenaBytes}");
  }
  const val known = val::array(std::vector<std::string>{"fusion", "threads", "policy", "dumpPasses", "maxArenaBytes"});
  const val keys = val::global("Object").call<val>("keys", v);
  for (const val& key : elements(keys, what)) {
    if (!known.call<bool>("includes", key)) {
      fail(ErrorCode::InvalidArgument, what + ": unknown option '" + key.as<std::string>() +
                                           "' (known: fusion, threads, policy, dumpPasses, maxArenaBytes)");
    }
  }
  auto flag = [&](const char* name, bool fallback) {
    const val x = v[name];
    if (x.isUndefined()) return fallback;
    if (!x.isTrue() && !x.isFalse()) fail(ErrorCode::InvalidArgument, what + "." + name + " must be a boolean");
    return x.isTrue();
  };
  options.fusion = flag("fusion", options.fusion);
  options.dump_passes = flag("dumpPasses", options.dump_passes);
  if (!v["threads"].isUndefined()) options.threads = static_cast<int>(to_i64(v["threads"], what + ".threads"));
  options.policy = to_policy(v["policy"], what + ".policy");
  if (!is_nullish(v["maxArenaBytes"])) {
    options.max_arena_bytes = static_cast<size_t>(to_u64(v["maxArenaBytes"], what + ".maxArenaBytes"));
  }
  return options;
}

ParamMap to_param_map(const val& v, const std::string& what) {
  ParamMap out;
  if (is_instance(v, "Map")) {
    const val entries = val::global("Array").call<val>("from", v);
    for (const val& entry : elements(entries, what)) {
      const std::string name = entry[0].isString() ? entry[0].as<std::string>() : "";
      if (name.empty()) fail(ErrorCode::InvalidArgument, what + ": every key must be a non-empty string");
      out[name] = to_floats(entry[1], what + " '" + name + "'");
    }
    return out;
  }
  if (v.typeOf().as<std::string>() != "object" || v.isNull() || v.isArray()) {
    fail(ErrorCode::InvalidArgument, what + " must be an object or Map of name to Float32Array, got " + type_name(v));
  }
  const val keys = val::global("Object").call<val>("keys", v);
  for (const val& key : elements(keys, what)) {
    const std::string name = key.as<std::string>();
    out[name] = to_floats(v[name], what + " '" + name + "'");
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

val from_floats(const std::vector<float>& data) {
  return val::global("Float32Array").new_(emscripten::typed_memory_view(data.size(), data.data()));
}

val from_outputs(const std::vector<std::vector<float>>& outputs) {
  val out = val::array();
  for (size_t i = 0; i < outputs.size(); ++i) out.set(i, from_floats(outputs[i]));
  return out;
}

val from_ranges(const std::vector<Range>& ranges) {
  val out = val::array();
  for (size_t i = 0; i < ranges.size(); ++i) {
    val r = val::object();
    r.set("start", static_cast<double>(ranges[i].start));
    r.set("end", static_cast<double>(ranges[i].end));
    out.set(i, r);
  }
  return out;
}

val from_named_shapes(const std::vector<std::pair<std::string, Shape>>& list) {
  val out = val::array();
  for (size_t i = 0; i < list.size(); ++i) {
    val item = val::object();
    item.set("name", list[i].first);
    item.set("shape", from_shape(list[i].second));
    out.set(i, item);
  }
  return out;
}

val from_param_map(const ParamMap& params) {
  val out = val::object();
  for (const auto& [name, values] : params) out.set(name, from_floats(values));
  return out;
}

val from_policy(const std::optional<PrecisionPolicy>& policy) {
  return policy ? val(std::string(policy->name())) : val::null();
}

}  // namespace rungs::wasm
