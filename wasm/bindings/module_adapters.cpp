// SPDX-License-Identifier: Apache-2.0
// Module-level adapters: version, heap figures, pad/slice, the ladder functions and Model
// (see adapters.hpp).
#include <malloc.h>

#include <string>
#include <utility>
#include <vector>

#include "adapters.hpp"
#include "rungs/isa.hpp"
#include "rungs/version.hpp"

namespace rungs::wasm {
namespace {

TensorDType to_dtype(const std::string& name) {
  for (const auto dtype : {TensorDType::F32, TensorDType::BF16, TensorDType::F16}) {
    if (name == to_string(dtype)) return dtype;
  }
  fail(ErrorCode::InvalidArgument, "dtype must be 'F32', 'BF16' or 'F16', got '" + name + "'");
}

}  // namespace

std::string version() { return std::string(rungs::version()); }

std::string cpu_isa() {
  return guarded([] { return rungs::cpu_isa(); });
}

val heap_stats() {
  const struct mallinfo info = mallinfo();
  val out = val::object();
  out.set("heapBytes", val::module_property("HEAP8")["length"]);
  out.set("allocatedBytes", static_cast<double>(info.uordblks));
  return out;
}

val pad_rows(const val& data, const val& inner, const val& upper) {
  return guarded([&] {
    return from_floats(rungs::pad_rows(to_floats(data, "padRows: data"), to_u64(inner, "padRows: inner"),
                                       to_u64(upper, "padRows: upper")));
  });
}

val slice_rows(const val& data, const val& inner, const val& actual) {
  return guarded([&] {
    return from_floats(rungs::slice_rows(to_floats(data, "sliceRows: data"), to_u64(inner, "sliceRows: inner"),
                                         to_u64(actual, "sliceRows: actual")));
  });
}

// ---- ladder ---------------------------------------------------------------------------------

val ladder_head() {
  val out = val::array();
  for (size_t i = 0; i < std::size(ladder::kHead); ++i) out.set(i, static_cast<double>(ladder::kHead[i]));
  return out;
}

void ladder_validate(const val& buckets, const std::string& who) {
  guarded([&] { ladder::validate(to_ranges(buckets, who + ": buckets"), who.c_str()); });
}

val ladder_power_of_two(const val& min, const val& max, bool head) {
  return guarded([&] {
    return from_ranges(ladder::power_of_two(to_u64(min, "powerOfTwo: min"), to_u64(max, "powerOfTwo: max"), head));
  });
}

val ladder_geometric(const val& min, const val& max, double ratio, bool head) {
  return guarded([&] {
    return from_ranges(
        ladder::geometric(to_u64(min, "geometric: min"), to_u64(max, "geometric: max"), ratio, head));
  });
}

val ladder_linear(const val& min, const val& max, const val& step, bool head) {
  return guarded([&] {
    return from_ranges(ladder::linear(to_u64(min, "linear: min"), to_u64(max, "linear: max"),
                                      to_u64(step, "linear: step"), head));
  });
}

val ladder_from_extents(const val& extents, bool head) {
  return guarded([&] {
    const auto list = to_keys(extents, "fromExtents: extents");
    return from_ranges(ladder::from_extents(std::span<const uint64_t>(list), head));
  });
}

val ladder_with_head(const val& buckets, const val& head) {
  return guarded([&] {
    const auto ranges = to_ranges(buckets, "withHead: ladder");
    if (is_nullish(head)) return from_ranges(ladder::with_head(ranges));
    const auto extents = to_keys(head, "withHead: head");
    return from_ranges(ladder::with_head(ranges, extents));
  });
}

val ladder_optimal(const val& keys, const val& max_buckets) {
  return guarded([&] {
    return from_ranges(ladder::optimal(to_keys(keys, "optimal: observedKeys"),
                                       static_cast<size_t>(to_u64(max_buckets, "optimal: maxBuckets"))));
  });
}

double ladder_expected_waste(const val& buckets, const val& keys) {
  return guarded([&] {
    return ladder::expected_waste(to_ranges(buckets, "expectedWaste: buckets"),
                                  to_keys(keys, "expectedWaste: observedKeys"));
  });
}

double ladder_padded_rows(const val& buckets, const val& keys) {
  return guarded([&] {
    return static_cast<double>(
        ladder::padded_rows(to_ranges(buckets, "paddedRows: buckets"), to_keys(keys, "paddedRows: observedKeys")));
  });
}

val ladder_lognormal_trace(double median, const val& count, const val& max, const val& seed, double sigma) {
  return guarded([&] {
    const auto trace = ladder::lognormal_trace(median, static_cast<size_t>(to_u64(count, "lognormalTrace: count")),
                                               to_u64(max, "lognormalTrace: max"),
                                               to_u64(seed, "lognormalTrace: seed"), sigma);
    val out = val::array();
    for (size_t i = 0; i < trace.size(); ++i) out.set(i, static_cast<double>(trace[i]));
    return out;
  });
}

// ---- Model ----------------------------------------------------------------------------------

Model* model_load(const val& json, const val& safetensors, const std::string& source) {
  return guarded([&]() -> Model* {
    std::string text;
    if (json.isString()) {
      text = json.as<std::string>();
    } else {
      const auto bytes = to_bytes(json, "loadModel: jsonText (a string or Uint8Array)");
      text.assign(bytes.begin(), bytes.end());
    }
    const auto weights = to_bytes(safetensors, "loadModel: safetensors");
    return new Model(load_model_from_bytes(text, weights, source));
  });
}

// options: what index.js's loadOnnx made of the user's object (it checks the types and names
// first): { bucketDim: string, fix: [[symbol, value], ...], externalData: [[location, Uint8Array], ...] }.
Model* model_load_onnx(const val& onnx, const val& options, const std::string& source) {
  return guarded([&]() -> Model* {
    const auto bytes = to_bytes(onnx, "loadOnnx: bytes (the .onnx file, a Uint8Array)");
    LoadOptions o;
    o.bucket_dim = options["bucketDim"].as<std::string>();
    const val fix = options["fix"];
    const auto nfix = fix["length"].as<size_t>();
    for (size_t i = 0; i < nfix; ++i) {
      const std::string name = fix[i][0].as<std::string>();
      o.fix.emplace_back(name, to_i64(fix[i][1], "loadOnnx: options.fix." + name));
    }
    const val ext = options["externalData"];
    const auto next = ext["length"].as<size_t>();
    for (size_t i = 0; i < next; ++i) {
      const std::string location = ext[i][0].as<std::string>();
      o.external_data.emplace_back(location, to_bytes(ext[i][1], "loadOnnx: options.externalData['" + location + "']"));
    }
    return new Model(load_model_from_onnx_bytes(bytes, o, source));
  });
}

Model* model_parse(const std::string& json, const std::string& source) {
  return guarded([&] { return new Model(Model::parse(json, source)); });
}

val model_inputs(const Model& model, const val& extent) {
  return guarded([&] {
    val out = val::array();
    const auto inputs = model.inputs(to_u64(extent, "inputs: extent"));
    for (size_t i = 0; i < inputs.size(); ++i) {
      val item = val::object();
      item.set("name", inputs[i].name);
      item.set("shape", from_shape(inputs[i].shape));
      out.set(i, item);
    }
    return out;
  });
}

namespace {
const char* element_type_name(ElementType t) {
  switch (t) {
    case ElementType::I64: return "int64";
    case ElementType::I32: return "int32";
    case ElementType::Bool: return "bool";
    case ElementType::F32: break;
  }
  return "float32";
}
const char* input_role_name(InputRole r) {
  switch (r) {
    case InputRole::Ids: return "ids";
    case InputRole::Mask: return "mask";
    case InputRole::Values: break;
  }
  return "values";
}
}  // namespace

// [{name, shape, followsBucket, rowValues (null when not padded by rows), dtype, role}] per input.
val model_input_layouts(const Model& model, const val& extent) {
  return guarded([&] {
    const auto layouts = model.input_layouts(to_u64(extent, "inputLayouts: extent"));
    val out = val::array();
    for (size_t i = 0; i < layouts.size(); ++i) {
      val item = val::object();
      item.set("name", layouts[i].name);
      item.set("shape", from_shape(layouts[i].shape));
      item.set("followsBucket", layouts[i].follows_bucket);
      item.set("rowValues", layouts[i].row_values ? val(static_cast<double>(*layouts[i].row_values)) : val::null());
      item.set("dtype", std::string(element_type_name(layouts[i].dtype)));
      item.set("role", std::string(input_role_name(model.input_role(i))));
      out.set(i, item);
    }
    return out;
  });
}

// runPadded*'s outputInners: per output its values per row, 0 for an output returned whole.
val model_output_inners(const Model& model) {
  return guarded([&] {
    val out = val::array();
    const auto inners = model.output_inners();
    for (size_t i = 0; i < inners.size(); ++i) out.set(i, static_cast<double>(inners[i]));
    return out;
  });
}

// Reproducible inputs for `rows` rows (ids in range, masks of ones): Float32Array per input.
val model_synthetic_inputs(const Model& model, const val& rows, const val& seed) {
  return guarded([&] {
    return from_outputs(model.synthetic_inputs(to_u64(rows, "syntheticInputs: rows"),
                                               to_u64(seed, "syntheticInputs: seed")));
  });
}

val model_output_names(const Model& model) {
  return guarded([&] { return from_strings(model.output_names()); });
}

val model_params(const Model& model) {
  return guarded([&] {
    val out = val::array();
    const auto& params = model.params();
    for (size_t i = 0; i < params.size(); ++i) {
      val item = val::object();
      item.set("name", params[i].name);
      item.set("shape", from_shape(params[i].shape));
      item.set("dtype", std::string(to_string(params[i].dtype)));
      out.set(i, item);
    }
    return out;
  });
}

double model_param_count(const Model& model) {
  return guarded([&] { return static_cast<double>(model.param_count()); });
}

val model_build(const Model& model, const val& extent) {
  return guarded([&] {
    auto [module, params] = model.build(to_u64(extent, "build: extent"));
    val out = val::array();
    out.set(0, val(std::move(module)));  // a new JS handle that owns the module
    out.set(1, from_param_map(params));
    return out;
  });
}

HirModule model_build_module(const Model& model, const val& extent) {
  return guarded([&] { return model.build_module(to_u64(extent, "buildModule: extent")); });
}

std::string model_to_json(const Model& model, const std::string& weights_file) {
  return guarded([&] { return model.to_json(weights_file); });
}

val model_weights_bytes(const Model& model, const std::string& dtype) {
  return guarded([&] {
    const auto bytes = rungs::model_weights_bytes(model, to_dtype(dtype));
    return val::global("Uint8Array").new_(emscripten::typed_memory_view(bytes.size(), bytes.data()));
  });
}

}  // namespace rungs::wasm
