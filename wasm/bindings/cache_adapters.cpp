// SPDX-License-Identifier: Apache-2.0
// BucketedCompileCache adapters (see adapters.hpp). `build` arrives as a JS function that index.js
// has wrapped so it never throws (a JS exception unwinding through the cache would skip its
// bookkeeping), or as a Model, whose build runs in C++ without copying weights through JS.
#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include "adapters.hpp"
#include "rungs/cache_stats_schema.hpp"

namespace rungs::wasm {
namespace {

BucketedCompileCache& cache_of(const JsCache& js) {
  if (!js.cache) fail(ErrorCode::InvalidArgument, "BucketedCompileCache: this cache failed to construct");
  return *js.cache;
}

bool is_module_instance(const val& v, const char* class_name) {
  return v.typeOf().as<std::string>() == "object" && !v.isNull() && v.instanceof(val::module_property(class_name));
}

std::string describe(const val& v) {
  if (v.isUndefined()) return "undefined";
  if (v.isNull()) return "null";
  if (v.isArray()) return "an array of length " + std::to_string(v["length"].as<unsigned>());
  return "a value of type " + v.typeOf().as<std::string>();
}

// Moves the C++ object out of a JS handle the build returned, then deletes the handle: the cache
// takes what build gives, as it takes a C++ build's return value.
template <class T>
T take(const val& handle, uint64_t upper, const char* class_name) {
  if (handle.call<bool>("isDeleted")) {
    fail(ErrorCode::InvalidArgument,
         "build(" + std::to_string(upper) + ") returned a " + class_name + " that was already deleted");
  }
  T* object = handle.as<T*>(emscripten::allow_raw_pointers());
  T out = std::move(*object);
  handle.call<void>("delete");
  return out;
}

detail::Built call_build(const val& build, uint64_t upper) {
  if (is_module_instance(build, "Model")) {
    if (build.call<bool>("isDeleted")) fail(ErrorCode::InvalidArgument, "build: the Model was deleted");
    auto [module, params] = build.as<Model*>(emscripten::allow_raw_pointers())->build(upper);
    return {std::move(module), std::move(params)};
  }
  const std::string who = "build(" + std::to_string(upper) + ")";
  const val result = build(static_cast<double>(upper));
  val source = result;
  ParamMap params;
  if (result.isArray()) {
    if (result["length"].as<unsigned>() != 2) {
      fail(ErrorCode::InvalidArgument, who + " returned " + describe(result) + "; expected [Graph or HirModule, params]");
    }
    source = result[0];
    params = to_param_map(result[1], who + " params");
  }
  if (is_module_instance(source, "Graph")) return {take<Graph>(source, upper, "Graph"), std::move(params)};
  if (is_module_instance(source, "HirModule")) return {take<HirModule>(source, upper, "HirModule"), std::move(params)};
  fail(ErrorCode::InvalidArgument, who + " returned " + describe(source) +
                                       "; expected a Graph, a HirModule, or [Graph or HirModule, params]");
}

void check_build(const val& build, const char* who) {
  if (build.typeOf().as<std::string>() != "function" && !is_module_instance(build, "Model")) {
    fail(ErrorCode::InvalidArgument, std::string(who) + ": build must be a function (upper) => Graph or a Model");
  }
}

val from_entry(const JsCache& js, const std::optional<BucketEntry>& entry) {
  if (!entry) return val::null();
  val out = val::object();
  out.set("upper", static_cast<double>(entry->upper));
  out.set("graph", GraphPtr(js.cache, entry->graph));  // aliases the cache: keeps it alive
  return out;
}

std::vector<size_t> to_inners(const val& list, const std::string& what) {
  std::vector<size_t> out;
  for (uint64_t x : to_keys(list, what)) out.push_back(static_cast<size_t>(x));
  return out;
}

val from_run(const std::optional<PaddedRun>& run) {
  if (!run) return val::null();
  val out = val::object();
  out.set("upper", static_cast<double>(run->upper));
  out.set("outputs", from_outputs(run->outputs));
  out.set("mode", std::string(run->mode == RunMode::Active ? "active" : "padded"));
  return out;
}

// The inputs of runPadded / runPaddedMixed: names and copies owned here, spans handed to C++.
struct RunInputs {
  std::vector<std::string> names;
  std::vector<OwnedTensor> data;
  std::vector<std::optional<size_t>> inners;

  RunInputs() = default;
  RunInputs(const val& list, bool mixed, const std::string& what) {
    if (!list.isArray()) fail(ErrorCode::InvalidArgument, what + ": inputs must be an array of {name, data, " +
                                                             (mixed ? "rowInner}" : "inner}"));
    const unsigned n = list["length"].as<unsigned>();
    for (unsigned i = 0; i < n; ++i) {
      const val item = list[i];
      const std::string at = what + ": inputs[" + std::to_string(i) + "]";
      if (item.typeOf().as<std::string>() != "object" || item.isNull() || !item["name"].isString()) {
        fail(ErrorCode::InvalidArgument, at + " must be an object with a string name");
      }
      names.push_back(item["name"].as<std::string>());
      const std::string named = at + " '" + names.back() + "'";
      data.push_back(to_tensor(item["data"], named + ".data"));
      if (mixed) {
        const val inner = item["rowInner"];
        inners.push_back(is_nullish(inner) ? std::nullopt
                                           : std::optional<size_t>(to_u64(inner, named + ".rowInner")));
      } else {
        inners.push_back(static_cast<size_t>(to_u64(item["inner"], named + ".inner")));
      }
    }
  }
};

// Every padded input must hold exactly actualRows rows (its values / inner): the outputs are sliced
// to actualRows, so fewer rows would return padding as results and more would drop real rows.
// Checked only where the cache would run (a key in a bucket, actualRows within its upper), so a
// key outside every bucket still gives null and an actualRows above upper its own error.
void check_actual_rows(const BucketedCompileCache& cache, uint64_t key, uint64_t actual, const RunInputs& in,
                       const std::string& what) {
  const std::optional<size_t> bucket = cache.bucket_for(key);
  if (!bucket || actual > cache.buckets()[*bucket].end - 1) return;
  for (size_t i = 0; i < in.names.size(); ++i) {
    if (!in.inners[i] || *in.inners[i] == 0 || in.data[i].size() % *in.inners[i] != 0) continue;
    const size_t rows = in.data[i].size() / *in.inners[i];
    if (rows != actual) {
      fail(ErrorCode::ShapeMismatch,
           what + ": input '" + in.names[i] + "' holds " + std::to_string(rows) + " rows (" +
               std::to_string(in.data[i].size()) + " values of inner " + std::to_string(*in.inners[i]) +
               ") but actualRows is " + std::to_string(actual) + "; pass each input's real rows only");
    }
  }
}

// A stats field as JS gets it: counters and byte counts as numbers, flags as booleans.
val js_number(bool v) { return val(v); }
template <class T>
val js_number(T v) {
  return val(static_cast<double>(v));
}

val from_bucket_stats(const BucketStats& b) {
  val out = val::object();
  val range = val::object();
  range.set("start", static_cast<double>(b.range.start));
  range.set("end", static_cast<double>(b.range.end));
  out.set("range", range);
  stats_schema::for_each_bucket_only([&](const char* name, auto member) { out.set(stats_schema::camel_case(name), js_number(b.*member)); });
  stats_schema::for_each_summed(
      [&](const char* name, const char*, auto member, auto) { out.set(stats_schema::camel_case(name), js_number(b.*member)); });
  out.set("activeSupported", b.active_supported ? val(*b.active_supported) : val::null());
  out.set("activeReason", b.active_reason);
  out.set("activeDiffersFromPadding", b.active_differs_from_padding);
  return out;
}

}  // namespace

// Embind's `new` needs an object even when construction failed: index.js deletes it and throws.
JsCache* cache_new(Device device, const val& buckets) {
  JsCache* js = guarded([&] {
    return new JsCache{std::make_shared<BucketedCompileCache>(device, to_ranges(buckets, "buckets"))};
  });
  return js ? js : new JsCache{};
}

JsCache* cache_with_policy(Device device, const val& buckets, const val& policy) {
  return guarded([&] {
    return new JsCache{std::make_shared<BucketedCompileCache>(BucketedCompileCache::with_policy(
        device, to_ranges(buckets, "buckets"), to_policy(policy, "withPolicy: policy")))};
  });
}

JsCache* cache_power_of_two(Device device, const val& min, const val& max) {
  return guarded([&] {
    return new JsCache{std::make_shared<BucketedCompileCache>(BucketedCompileCache::power_of_two_ladder(
        device, to_u64(min, "powerOfTwoLadder: min"), to_u64(max, "powerOfTwoLadder: max")))};
  });
}

JsCache* cache_power_of_two_with_policy(Device device, const val& min, const val& max, const val& policy) {
  return guarded([&] {
    return new JsCache{std::make_shared<BucketedCompileCache>(BucketedCompileCache::power_of_two_ladder_with_policy(
        device, to_u64(min, "powerOfTwoLadderWithPolicy: min"), to_u64(max, "powerOfTwoLadderWithPolicy: max"),
        to_policy(policy, "powerOfTwoLadderWithPolicy: policy")))};
  });
}

val cache_get_or_compile(JsCache& js, const val& key, const val& build, const val& options) {
  return guarded([&] {
    check_build(build, "getOrCompile");
    auto& cache = cache_of(js);
    const auto entry = cache.get_or_compile_with_options(
        to_u64(key, "getOrCompile: key"), [&](uint64_t upper) { return call_build(build, upper); },
        to_options(options, "getOrCompile: options"));
    return from_entry(js, entry);
  });
}

val cache_ensure_with_params(JsCache& js, const val& key, const val& build, const val& options) {
  return guarded([&] {
    check_build(build, "ensureWithParams");
    auto& cache = cache_of(js);
    const auto entry = cache.ensure_graph_with_params(
        to_u64(key, "ensureWithParams: key"), [&](uint64_t upper) { return call_build(build, upper); },
        to_options(options, "ensureWithParams: options"));
    return from_entry(js, entry);
  });
}

val cache_bucket_for(const JsCache& js, const val& key) {
  return guarded([&] {
    const auto index = cache_of(js).bucket_for(to_u64(key, "bucketFor: key"));
    return index ? val(static_cast<double>(*index)) : val::null();
  });
}

val cache_buckets(const JsCache& js) {
  return guarded([&] {
    const auto buckets = cache_of(js).buckets();
    return from_ranges({buckets.begin(), buckets.end()});
  });
}

double cache_compiled_count(const JsCache& js) {
  return guarded([&] { return static_cast<double>(cache_of(js).compiled_count()); });
}

double cache_total_buckets(const JsCache& js) {
  return guarded([&] { return static_cast<double>(cache_of(js).total_buckets()); });
}

val cache_run_padded(JsCache& js, const val& key, const val& actual_rows, const val& build, const val& inputs,
                     const val& output_inners) {
  return guarded([&] {
    check_build(build, "runPadded");
    auto& cache = cache_of(js);
    const RunInputs in(inputs, false, "runPadded");
    std::vector<PaddedInput> padded;
    for (size_t i = 0; i < in.names.size(); ++i) padded.push_back({in.names[i], in.data[i].view(), *in.inners[i]});
    const auto inners = to_inners(output_inners, "runPadded: outputInners");
    const uint64_t k = to_u64(key, "runPadded: key");
    const uint64_t actual = to_u64(actual_rows, "runPadded: actualRows");
    check_actual_rows(cache, k, actual, in, "runPadded");
    return from_run(cache.run_padded(
        k, static_cast<size_t>(actual), [&](uint64_t upper) { return call_build(build, upper); }, padded, inners));
  });
}

val cache_run_padded_mixed(JsCache& js, const val& key, const val& actual_rows, const val& build,
                           const val& inputs, const val& output_inners) {
  return guarded([&] {
    check_build(build, "runPaddedMixed");
    auto& cache = cache_of(js);
    const RunInputs in(inputs, true, "runPaddedMixed");
    std::vector<CacheRunInput> mixed;
    for (size_t i = 0; i < in.names.size(); ++i) mixed.push_back({in.names[i], in.data[i].view(), in.inners[i]});
    const auto inners = to_inners(output_inners, "runPaddedMixed: outputInners");
    const uint64_t k = to_u64(key, "runPaddedMixed: key");
    const uint64_t actual = to_u64(actual_rows, "runPaddedMixed: actualRows");
    check_actual_rows(cache, k, actual, in, "runPaddedMixed");
    return from_run(cache.run_padded_mixed(
        k, static_cast<size_t>(actual), [&](uint64_t upper) { return call_build(build, upper); }, mixed, inners));
  });
}

double cache_run_padded_staged(JsCache& js, double key, double actual_rows, const val& build, const std::string& names,
                               const val& numbers) {
  return guarded([&] {
    check_build(build, "runPadded");
    auto& cache = cache_of(js);
    // numbers: [inputs, (values, inner) per input, outputs, inner per output]; index.js checked
    // every one is a whole number >= 0 and each name free of '\0'.
    const std::vector<double> n = emscripten::convertJSArrayToNumberVector<double>(numbers);
    RunInputs in;
    const auto count = static_cast<size_t>(n.at(0));
    size_t at = 1, start = 0;
    for (size_t k = 0; k < count; ++k, at += 2) {
      const size_t end = names.find('\0', start);
      in.names.push_back(names.substr(start, end - start));
      start = end + 1;
      std::vector<float> values(static_cast<size_t>(n.at(at)));
      rungs_staged_fill(k, values.data(), values.size());
      in.data.push_back({std::move(values)});
      in.inners.push_back(static_cast<size_t>(n.at(at + 1)));
    }
    std::vector<size_t> inners(static_cast<size_t>(n.at(at)));
    for (size_t j = 0; j < inners.size(); ++j) inners[j] = static_cast<size_t>(n.at(at + 1 + j));
    std::vector<PaddedInput> padded;
    for (size_t i = 0; i < in.names.size(); ++i) padded.push_back({in.names[i], in.data[i].view(), *in.inners[i]});
    const auto k = static_cast<uint64_t>(key);
    const auto actual = static_cast<uint64_t>(actual_rows);
    check_actual_rows(cache, k, actual, in, "runPadded");
    const std::optional<PaddedRun> run = cache.run_padded(
        k, static_cast<size_t>(actual), [&](uint64_t upper) { return call_build(build, upper); }, padded, inners);
    if (!run) return -1.0;
    for (size_t j = 0; j < run->outputs.size(); ++j) rungs_staged_take(j, run->outputs[j].data(), run->outputs[j].size());
    return static_cast<double>(run->upper) * 2 + (run->mode == RunMode::Active ? 1 : 0);
  });
}

void cache_set_active_extent(JsCache& js, bool on) {
  guarded([&] { cache_of(js).set_active_extent(on); });
}

bool cache_active_extent(const JsCache& js) {
  return guarded([&] { return cache_of(js).active_extent(); });
}

val from_cache_stats(const CacheStats& s) {
  val buckets = val::array();
  for (size_t i = 0; i < s.buckets.size(); ++i) buckets.set(i, from_bucket_stats(s.buckets[i]));
  val out = val::object();
  out.set("buckets", buckets);
  stats_schema::for_each_summed([&](const char*, const char* name, auto, auto member) {
    out.set(stats_schema::camel_case(name), js_number(s.*member));
  });
  stats_schema::for_each_total_only(
      [&](const char* name, auto member) { out.set(stats_schema::camel_case(name), js_number(s.*member)); });
  out.set("waste", s.waste());
  out.set("computeWaste", s.compute_waste());
  return out;
}

val cache_stats(const JsCache& js) {
  return guarded([&] { return from_cache_stats(cache_of(js).stats()); });
}

std::string cache_stats_json(const JsCache& js) {
  return guarded([&] { return cache_of(js).stats().to_json(); });
}

Device cache_device(const JsCache& js) {
  return guarded([&] { return cache_of(js).device(); });
}

val cache_policy(const JsCache& js) {
  return guarded([&] { return from_policy(cache_of(js).policy()); });
}

}  // namespace rungs::wasm
