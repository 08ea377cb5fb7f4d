// SPDX-License-Identifier: Apache-2.0
// bench/native/addon.cpp: rungs natively, as a Node add-on, so that bench/native/run.mjs can run
// it side by side with onnxruntime-node in ONE process (same inputs, same thread count, outputs
// compared before timing). A benchmark harness, not a product API: handles are externals, errors
// are thrown as JS Errors with rungs' message.
//
//   version() -> string                    isa() -> string (the dispatched ISA)
//   loadModel(path, {bucketDim, fix: {NAME: VALUE}}?) -> model   (.json or .onnx)
//   modelInfo(model) -> {bucketDim, inputs: [{name, rowValues, role}], outputs: [{name, rowValues}]}
//       (rowValues: values per row of the bucket dim, 0 for a tensor that does not follow it)
//   compile(model, extent, threads) -> compiled          (the model built at `extent`, params set)
//   compileMatmul(n, B: Float32Array, threads) -> compiled  (C = A @ B, B a param)
//   run(compiled, names[], arrays[]) -> Float32Array[]
//   cache(model, [[start, end], ...], activeExtent, threads) -> cache
//   cacheRun(cache, model, rows, names[], arrays[], inners[] (0: unpadded), outputInners[])
//       -> Float32Array[] (null when no bucket holds `rows`)
//   cacheStats(cache) -> string (CacheStats::to_json)
#include <node_api.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <rungs/rungs.hpp>

namespace {

struct CacheBox {
  rungs::BucketedCompileCache cache;
  rungs::CompileOptions options;
  std::vector<bool> prepared;
};

#define NAPI_OK(call)                                                \
  do {                                                               \
    if ((call) != napi_ok) throw std::runtime_error("napi: " #call); \
  } while (0)

template <class T>
napi_value wrap(napi_env env, std::unique_ptr<T> p) {
  napi_value v;
  NAPI_OK(napi_create_external(
      env, p.get(), [](napi_env, void* data, void*) { delete static_cast<T*>(data); }, nullptr, &v));
  p.release();
  return v;
}

template <class T>
T* unwrap(napi_env env, napi_value v) {
  void* p = nullptr;
  NAPI_OK(napi_get_value_external(env, v, &p));
  return static_cast<T*>(p);
}

std::vector<napi_value> args(napi_env env, napi_callback_info info, size_t n) {
  std::vector<napi_value> a(n);
  size_t got = n;
  NAPI_OK(napi_get_cb_info(env, info, &got, a.data(), nullptr, nullptr));
  if (got < n) throw std::runtime_error("expected " + std::to_string(n) + " arguments, got " + std::to_string(got));
  return a;
}

std::string str(napi_env env, napi_value v) {
  size_t len = 0;
  NAPI_OK(napi_get_value_string_utf8(env, v, nullptr, 0, &len));
  std::string s(len, '\0');
  NAPI_OK(napi_get_value_string_utf8(env, v, s.data(), len + 1, &len));
  return s;
}

int64_t num(napi_env env, napi_value v) {
  int64_t x = 0;
  NAPI_OK(napi_get_value_int64(env, v, &x));
  return x;
}

std::span<const float> floats(napi_env env, napi_value v) {
  napi_typedarray_type type;
  size_t length = 0;
  void* data = nullptr;
  NAPI_OK(napi_get_typedarray_info(env, v, &type, &length, &data, nullptr, nullptr));
  if (type != napi_float32_array) throw std::runtime_error("expected a Float32Array");
  return {static_cast<const float*>(data), length};
}

napi_value to_js(napi_env env, const std::vector<float>& x) {
  void* data = nullptr;
  napi_value buffer, array;
  NAPI_OK(napi_create_arraybuffer(env, x.size() * sizeof(float), &data, &buffer));
  if (!x.empty()) std::memcpy(data, x.data(), x.size() * sizeof(float));
  NAPI_OK(napi_create_typedarray(env, napi_float32_array, x.size(), buffer, 0, &array));
  return array;
}

napi_value to_js(napi_env env, const std::vector<std::vector<float>>& outs) {
  napi_value list;
  NAPI_OK(napi_create_array_with_length(env, outs.size(), &list));
  for (size_t i = 0; i < outs.size(); ++i) NAPI_OK(napi_set_element(env, list, i, to_js(env, outs[i])));
  return list;
}

std::vector<napi_value> elements(napi_env env, napi_value list) {
  uint32_t n = 0;
  NAPI_OK(napi_get_array_length(env, list, &n));
  std::vector<napi_value> v(n);
  for (uint32_t i = 0; i < n; ++i) NAPI_OK(napi_get_element(env, list, i, &v[i]));
  return v;
}

rungs::CompileOptions options_with(int64_t threads) {
  rungs::CompileOptions o;
  o.threads = static_cast<int>(threads);
  return o;
}

// Every entry point: exceptions become JS Errors.
template <napi_value (*F)(napi_env, napi_callback_info)>
napi_value guarded(napi_env env, napi_callback_info info) {
  try {
    return F(env, info);
  } catch (const std::exception& e) {
    napi_throw_error(env, nullptr, e.what());
    return nullptr;
  }
}

napi_value version(napi_env env, napi_callback_info) {
  napi_value v;
  const std::string_view s = rungs::version();
  NAPI_OK(napi_create_string_utf8(env, s.data(), s.size(), &v));
  return v;
}

napi_value isa(napi_env env, napi_callback_info) {
  const std::string name = rungs::cpu_isa();
  napi_value v;
  NAPI_OK(napi_create_string_utf8(env, name.c_str(), name.size(), &v));
  return v;
}

// {bucketDim: string, fix: {NAME: VALUE}} -> rungs::LoadOptions (absent fields: the defaults).
rungs::LoadOptions load_options(napi_env env, napi_value o) {
  rungs::LoadOptions options;
  napi_valuetype type;
  NAPI_OK(napi_typeof(env, o, &type));
  if (type != napi_object) return options;
  bool has = false;
  NAPI_OK(napi_has_named_property(env, o, "bucketDim", &has));
  if (has) {
    napi_value v;
    NAPI_OK(napi_get_named_property(env, o, "bucketDim", &v));
    options.bucket_dim = str(env, v);
  }
  NAPI_OK(napi_has_named_property(env, o, "fix", &has));
  if (has) {
    napi_value fix, keys;
    NAPI_OK(napi_get_named_property(env, o, "fix", &fix));
    NAPI_OK(napi_get_property_names(env, fix, &keys));
    for (napi_value k : elements(env, keys)) {
      napi_value v;
      NAPI_OK(napi_get_property(env, fix, k, &v));
      options.fix.emplace_back(str(env, k), num(env, v));
    }
  }
  return options;
}

napi_value load_model(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value a[2];
  NAPI_OK(napi_get_cb_info(env, info, &argc, a, nullptr, nullptr));
  if (argc < 1) throw std::runtime_error("loadModel(path, options?): expected a path");
  const rungs::LoadOptions options = argc > 1 ? load_options(env, a[1]) : rungs::LoadOptions{};
  return wrap(env, std::make_unique<rungs::Model>(rungs::load_model(str(env, a[0]), options)));
}

napi_value js_string(napi_env env, const std::string& s) {
  napi_value v;
  NAPI_OK(napi_create_string_utf8(env, s.c_str(), s.size(), &v));
  return v;
}

napi_value js_number(napi_env env, double x) {
  napi_value v;
  NAPI_OK(napi_create_double(env, x, &v));
  return v;
}

napi_value layouts_to_js(napi_env env, const std::vector<rungs::BucketLayout>& layouts, const rungs::Model* roles) {
  napi_value list;
  NAPI_OK(napi_create_array_with_length(env, layouts.size(), &list));
  for (size_t i = 0; i < layouts.size(); ++i) {
    napi_value o;
    NAPI_OK(napi_create_object(env, &o));
    NAPI_OK(napi_set_named_property(env, o, "name", js_string(env, layouts[i].name)));
    NAPI_OK(napi_set_named_property(env, o, "rowValues", js_number(env, static_cast<double>(layouts[i].row_values.value_or(0)))));
    if (roles) {
      const rungs::InputRole r = roles->input_role(i);
      NAPI_OK(napi_set_named_property(
          env, o, "role", js_string(env, r == rungs::InputRole::Ids ? "ids" : r == rungs::InputRole::Mask ? "mask"
                                                                                                          : "values")));
    }
    NAPI_OK(napi_set_element(env, list, i, o));
  }
  return list;
}

napi_value model_info(napi_env env, napi_callback_info info) {
  auto a = args(env, info, 1);
  const rungs::Model* m = unwrap<rungs::Model>(env, a[0]);
  napi_value o;
  NAPI_OK(napi_create_object(env, &o));
  NAPI_OK(napi_set_named_property(env, o, "bucketDim", js_string(env, m->bucket_dim())));
  NAPI_OK(napi_set_named_property(env, o, "inputs", layouts_to_js(env, m->input_layouts(1), m)));
  NAPI_OK(napi_set_named_property(env, o, "outputs", layouts_to_js(env, m->output_layouts(1), nullptr)));
  return o;
}

napi_value compile(napi_env env, napi_callback_info info) {
  auto a = args(env, info, 3);
  const rungs::Model* m = unwrap<rungs::Model>(env, a[0]);
  auto [hir, params] = m->build(static_cast<uint64_t>(num(env, a[1])));
  auto c = std::make_unique<rungs::CompiledGraph>(
      rungs::Session(rungs::Device::Cpu).compile_hir(hir, options_with(num(env, a[2]))));
  for (const auto& [name, values] : params) c->set_param(name, values);
  return wrap(env, std::move(c));
}

napi_value compile_matmul(napi_env env, napi_callback_info info) {
  auto a = args(env, info, 3);
  const int64_t n = num(env, a[0]);
  rungs::Graph g;
  g.output("c", g.matmul(g.input("a", {n, n}), g.param("b", {n, n})));
  auto c = std::make_unique<rungs::CompiledGraph>(rungs::Session(rungs::Device::Cpu).compile(g, options_with(num(env, a[2]))));
  c->set_param("b", floats(env, a[1]));
  return wrap(env, std::move(c));
}

napi_value run(napi_env env, napi_callback_info info) {
  auto a = args(env, info, 3);
  const auto* c = unwrap<rungs::CompiledGraph>(env, a[0]);
  auto names = elements(env, a[1]), arrays = elements(env, a[2]);
  std::vector<std::string> keep;
  for (napi_value n : names) keep.push_back(str(env, n));
  std::vector<rungs::NamedInput> in;
  for (size_t i = 0; i < keep.size(); ++i) in.push_back({keep[i], floats(env, arrays[i])});
  return to_js(env, c->run(in));
}

napi_value cache(napi_env env, napi_callback_info info) {
  auto a = args(env, info, 4);
  std::vector<rungs::Range> buckets;
  for (napi_value r : elements(env, a[1])) {
    auto se = elements(env, r);
    buckets.push_back({static_cast<uint64_t>(num(env, se.at(0))), static_cast<uint64_t>(num(env, se.at(1)))});
  }
  bool active = false;
  NAPI_OK(napi_get_value_bool(env, a[2], &active));
  auto box = std::make_unique<CacheBox>(
      CacheBox{rungs::BucketedCompileCache(rungs::Device::Cpu, buckets), options_with(num(env, a[3])), {}});
  box->cache.set_active_extent(active);
  box->prepared.assign(buckets.size(), false);
  return wrap(env, std::move(box));
}

napi_value cache_run(napi_env env, napi_callback_info info) {
  auto a = args(env, info, 7);
  auto* box = unwrap<CacheBox>(env, a[0]);
  const auto* m = unwrap<rungs::Model>(env, a[1]);
  const auto rows = static_cast<uint64_t>(num(env, a[2]));
  auto names = elements(env, a[3]), arrays = elements(env, a[4]), inners = elements(env, a[5]);
  std::vector<size_t> output_inners;
  for (napi_value v : elements(env, a[6])) output_inners.push_back(static_cast<size_t>(num(env, v)));
  auto build = [m](uint64_t upper) { return m->build(upper); };
  const auto bucket = box->cache.bucket_for(rows);
  napi_value null_value;
  NAPI_OK(napi_get_null(env, &null_value));
  if (!bucket) return null_value;
  if (!box->prepared[*bucket]) {  // compiled with the requested thread count, as `rungs bench` does
    box->cache.ensure_hir_with_params(rows, build, box->options);
    box->prepared[*bucket] = true;
  }
  std::vector<std::string> keep;
  for (napi_value n : names) keep.push_back(str(env, n));
  std::vector<rungs::CacheRunInput> in;
  for (size_t i = 0; i < keep.size(); ++i) {
    const int64_t inner = num(env, inners.at(i));
    in.push_back({keep[i], floats(env, arrays[i]), inner > 0 ? std::optional<size_t>(inner) : std::nullopt});
  }
  auto r = box->cache.run_padded_mixed(rows, rows, build, in, output_inners);
  return r ? to_js(env, r->outputs) : null_value;
}

napi_value cache_stats(napi_env env, napi_callback_info info) {
  auto a = args(env, info, 1);
  const std::string json = unwrap<CacheBox>(env, a[0])->cache.stats().to_json();
  napi_value v;
  NAPI_OK(napi_create_string_utf8(env, json.c_str(), json.size(), &v));
  return v;
}

napi_value init(napi_env env, napi_value exports) {
  const napi_property_descriptor props[] = {
      {"version", nullptr, guarded<version>, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"isa", nullptr, guarded<isa>, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"loadModel", nullptr, guarded<load_model>, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"modelInfo", nullptr, guarded<model_info>, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"compile", nullptr, guarded<compile>, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"compileMatmul", nullptr, guarded<compile_matmul>, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"run", nullptr, guarded<run>, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"cache", nullptr, guarded<cache>, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"cacheRun", nullptr, guarded<cache_run>, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"cacheStats", nullptr, guarded<cache_stats>, nullptr, nullptr, nullptr, napi_default, nullptr},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
