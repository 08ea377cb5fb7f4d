// SPDX-License-Identifier: Apache-2.0
// Bad ONNX files: each refused with its own message, and a model loaded before stays usable.
// The files are made here with the protobuf classes (core/import/onnx/onnx_proto.hpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/import/onnx/onnx_proto.hpp"
#include "rungs/rungs.hpp"
#include "test_util.hpp"

namespace rungs {
namespace {

namespace pb = onnx_import::pb;

std::vector<uint8_t> serialize(const pb::ModelProto& m) {
  std::string s;
  EXPECT_TRUE(m.SerializeToString(&s));
  return std::vector<uint8_t>(s.begin(), s.end());
}

void add_io(pb::ValueInfoProto* vi, const std::string& name, std::vector<std::string> dims, int type = 1) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(type);
  for (const auto& d : dims) {
    auto* dim = tt->mutable_shape()->add_dim();
    if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0]))) dim->set_dim_value(std::stoll(d));
    else dim->set_dim_param(d);
  }
}

pb::NodeProto* add_node(pb::GraphProto* g, const std::string& op, std::vector<std::string> in,
                        std::vector<std::string> out, const std::string& name) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (auto& i : in) n->add_input(i);
  for (auto& o : out) n->add_output(o);
  return n;
}

void add_float_init(pb::GraphProto* g, const std::string& name, std::vector<int64_t> dims, std::vector<float> v) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(1);
  for (auto d : dims) t->add_dims(d);
  for (float f : v) t->add_float_data(f);
}

void add_int_init(pb::GraphProto* g, const std::string& name, std::vector<int64_t> v) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(7);
  t->add_dims(static_cast<int64_t>(v.size()));
  for (auto x : v) t->add_int64_data(x);
}

// x [seq, 2] -> Relu -> y
pb::ModelProto relu_model(int64_t opset = 13) {
  pb::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  auto* g = m.mutable_graph();
  g->set_name("g");
  add_io(g->add_input(), "x", {"seq", "2"});
  add_io(g->add_output(), "y", {"seq", "2"});
  add_node(g, "Relu", {"x"}, {"y"}, "relu");
  return m;
}

void expect_load_error(const std::vector<uint8_t>& bytes, ErrorCode code, const std::string& needle,
                       const LoadOptions& options = {}) {
  testing::expect_error([&] { load_model_from_onnx_bytes(bytes, options, "bad"); }, code, needle);
}

TEST(OnnxBadFiles, ReluModelLoads) {
  const Model m = load_model_from_onnx_bytes(serialize(relu_model()), {}, "relu");
  EXPECT_EQ(m.bucket_dim(), "seq");
  const auto out = testing::compile_and_run(m.build(2).first.lower(), Device::Reference, {{"x", {-1, 2, 3, -4}}});
  EXPECT_EQ(out.at(0), (std::vector<float>{0, 2, 3, 0}));
}

TEST(OnnxBadFiles, NotAModel) {
  const std::vector<uint8_t> good = serialize(relu_model());
  Model before = load_model_from_onnx_bytes(good, {}, "good");
  // Truncated: cut inside the graph.
  expect_load_error(std::vector<uint8_t>(good.begin(), good.begin() + static_cast<long>(good.size() / 2)),
                    ErrorCode::ParseError, "bad.onnx: not an ONNX file");
  // Random bytes.
  std::mt19937 rng(3);
  std::vector<uint8_t> noise(512);
  for (auto& b : noise) b = static_cast<uint8_t>(rng());
  expect_load_error(noise, ErrorCode::ParseError, "bad.onnx: not an ONNX");
  expect_load_error({}, ErrorCode::ParseError, "the file is empty");
  // A valid protobuf that is not a model: a TensorShapeProto (its fields are unknown to ModelProto).
  pb::TensorShapeProto t;
  t.add_dim()->set_dim_value(3);
  t.add_dim()->set_dim_param("seq");
  std::string ts;
  t.SerializeToString(&ts);
  expect_load_error(std::vector<uint8_t>(ts.begin(), ts.end()), ErrorCode::ParseError, "not an ONNX model");
  // The model loaded before is unchanged and usable.
  EXPECT_EQ(before.bucket_dim(), "seq");
  EXPECT_EQ(before.build(3).first.lower().outputs().at(0).second, (Shape{3, 2}));
}

TEST(OnnxBadFiles, UnsupportedOpNamesTypeNodeOpsetAndTheList) {
  pb::ModelProto m = relu_model();
  m.mutable_graph()->mutable_node(0)->set_op_type("NonMaxSuppression");
  expect_load_error(serialize(m), ErrorCode::Unsupported,
                    "node 'relu' (NonMaxSuppression): op NonMaxSuppression (opset 13) is not supported; the "
                    "supported ops are: Abs, Add");
  m.mutable_graph()->mutable_node(0)->set_op_type("Relu");
  m.mutable_graph()->mutable_node(0)->set_domain("com.microsoft");
  expect_load_error(serialize(m), ErrorCode::Unsupported, "op com.microsoft.Relu (opset 13) is not supported");
}

TEST(OnnxBadFiles, OpsetOutOfRange) {
  expect_load_error(serialize(relu_model(9)), ErrorCode::Unsupported,
                    "opset 9 of the default domain is not supported: rungs reads opsets 11 to 17");
  expect_load_error(serialize(relu_model(18)), ErrorCode::Unsupported, "opset 18");
  for (int64_t ok : {11, 17}) EXPECT_NO_THROW(load_model_from_onnx_bytes(serialize(relu_model(ok))));
}

TEST(OnnxBadFiles, ShapeThatDoesNotFold) {
  // Reshape x to a shape computed from x's values: data-dependent.
  pb::ModelProto m = relu_model();
  auto* g = m.mutable_graph();
  g->clear_node();
  g->clear_output();
  add_io(g->add_output(), "y", {"n"});
  add_node(g, "Cast", {"x"}, {"y"}, "to_int")->add_attribute()->set_name("to");
  g->mutable_node(0)->mutable_attribute(0)->set_type(pb::AttributeProto::INT);
  g->mutable_node(0)->mutable_attribute(0)->set_i(7);
  expect_load_error(serialize(m), ErrorCode::Unsupported,
                    "node 'to_int' (Cast): Cast of a float computed at run time to INT64 is not supported");
  g->clear_node();
  add_node(g, "Relu", {"x"}, {"r"}, "relu");
  add_node(g, "Reshape", {"x", "r"}, {"y"}, "reshape_by_values");
  expect_load_error(serialize(m), ErrorCode::Unsupported,
                    "node 'reshape_by_values' (Reshape): input 'shape' ('r') is data-dependent");
}

// A folded shape holding NaN (a float Constant cast to INT64) names the input and the node; the
// model that loaded before is untouched (nothing is returned).
TEST(OnnxBadFiles, NaNWhereAnIntegerIsNeeded) {
  pb::ModelProto m = relu_model();
  auto* g = m.mutable_graph();
  g->clear_node();
  auto* constant = add_node(g, "Constant", {}, {"shape_f"}, "nan_shape");
  auto* value = constant->add_attribute();
  value->set_name("value");
  value->set_type(pb::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(1);
  value->mutable_t()->add_dims(2);
  value->mutable_t()->add_float_data(std::nanf(""));
  value->mutable_t()->add_float_data(2);
  auto* cast = add_node(g, "Cast", {"shape_f"}, {"shape"}, "to_int");
  cast->add_attribute()->set_name("to");
  cast->mutable_attribute(0)->set_type(pb::AttributeProto::INT);
  cast->mutable_attribute(0)->set_i(7);
  add_node(g, "Reshape", {"x", "shape"}, {"y"}, "reshape");
  expect_load_error(serialize(m), ErrorCode::ParseError,
                    "node 'reshape' (Reshape): input 'shape' holds NaN where an integer is needed");
}

TEST(OnnxBadFiles, DimsPastTheLimits) {
  pb::ModelProto m = relu_model();
  auto* in = m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  in->mutable_dim(1)->set_dim_value(int64_t{1} << 40);
  expect_load_error(serialize(m), ErrorCode::ParseError, "input 'x': dim 1099511627776 is outside [0, 2147483647]");
  pb::ModelProto w = relu_model();
  add_float_init(w.mutable_graph(), "big", {int64_t{1} << 20, int64_t{1} << 20}, {});
  expect_load_error(serialize(w), ErrorCode::ParseError, "initializer 'big': shape [1048576, 1048576] holds more than");
  pb::ModelProto r = relu_model();
  add_float_init(r.mutable_graph(), "short", {3, 2}, {1, 2, 3});
  expect_load_error(serialize(r), ErrorCode::ParseError, "initializer 'short': float_data holds 3 values, the shape [3, 2] needs 6");
  // A folded constant past the limit: ConstantOfShape of [2^20, 2^20].
  pb::ModelProto c = relu_model();
  auto* g = c.mutable_graph();
  add_int_init(g, "huge", {int64_t{1} << 20, int64_t{1} << 20});
  add_node(g, "ConstantOfShape", {"huge"}, {"z"}, "fill");
  add_io(g->add_output(), "z", {});
  expect_load_error(serialize(c), ErrorCode::OutOfRange, "node 'fill' (ConstantOfShape): the constant it computes");
}

TEST(OnnxBadFiles, ExternalData) {
  pb::ModelProto m = relu_model();
  auto* g = m.mutable_graph();
  auto* t = g->add_initializer();
  t->set_name("w");
  t->set_data_type(1);
  t->add_dims(2);
  t->set_data_location(pb::TensorProto::EXTERNAL);
  auto* kv = t->add_external_data();
  kv->set_key("location");
  kv->set_value("weights.bin");
  g->clear_node();
  add_node(g, "Add", {"x", "w"}, {"y"}, "add_w");
  const auto bytes = serialize(m);
  expect_load_error(bytes, ErrorCode::ParseError,
                    "initializer 'w' keeps its values in the external file 'weights.bin', which was not given: "
                    "pass its bytes in LoadOptions::external_data");
  // Given as bytes.
  LoadOptions o;
  const float w[2] = {10.f, 20.f};
  o.external_data.push_back({"weights.bin", std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(w),
                                                                 reinterpret_cast<const uint8_t*>(w) + 8)});
  const Model from_bytes = load_model_from_onnx_bytes(bytes, o);
  auto out = testing::compile_and_run(from_bytes.build(1).first.lower(), Device::Reference, {{"x", {1, 2}}},
                                      from_bytes.build(1).second);
  EXPECT_EQ(out.at(0), (std::vector<float>{11, 22}));
  // Too short.
  o.external_data[0].second.resize(4);
  expect_load_error(bytes, ErrorCode::ParseError, "does not hold the 8 bytes of shape [2]", o);
  // Natively: beside the model; missing there is an error naming the path.
  const auto dir = std::filesystem::temp_directory_path() / "rungs_onnx_external";
  std::filesystem::create_directories(dir);
  const std::string model_path = (dir / "m.onnx").string();
  std::ofstream(model_path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<long>(bytes.size()));
  std::filesystem::remove(dir / "weights.bin");
#ifdef __EMSCRIPTEN__
  // WebAssembly reads external data from LoadOptions::external_data only (no file streams in the
  // module: docs/onnx.md, "What it costs in the npm package"), even beside a model on disk.
  std::ofstream(dir / "weights.bin", std::ios::binary).write(reinterpret_cast<const char*>(w), 8);
  testing::expect_error([&] { load_model(model_path); }, ErrorCode::Unsupported,
                        "is not available in WebAssembly: pass its bytes in LoadOptions::external_data");
#else
  testing::expect_error([&] { load_model(model_path); }, ErrorCode::ParseError, "which cannot be read (looked for ");
  std::ofstream(dir / "weights.bin", std::ios::binary).write(reinterpret_cast<const char*>(w), 8);
  const Model from_file = load_model(model_path);
  out = testing::compile_and_run(from_file.build(1).first.lower(), Device::Reference, {{"x", {1, 2}}},
                                 from_file.build(1).second);
  EXPECT_EQ(out.at(0), (std::vector<float>{11, 22}));
#endif
  std::filesystem::remove_all(dir);
}

TEST(OnnxBadFiles, CycleAndUndefinedInput) {
  pb::ModelProto m = relu_model();
  auto* g = m.mutable_graph();
  g->clear_node();
  add_node(g, "Relu", {"b"}, {"a"}, "first");
  add_node(g, "Relu", {"a"}, {"b"}, "second");
  add_node(g, "Relu", {"a"}, {"y"}, "out");
  expect_load_error(serialize(m), ErrorCode::ParseError, "the graph has a cycle: node 'first' (Relu)");
  g->clear_node();
  add_node(g, "Relu", {"nowhere"}, {"y"}, "reads_nothing");
  expect_load_error(serialize(m), ErrorCode::ParseError,
                    "node 'reads_nothing' (Relu) reads 'nowhere', which no input, initializer or node defines");
  g->clear_node();
  expect_load_error(serialize(m), ErrorCode::ParseError, "output 'y' is not defined");
}

// Initializers of every supported type, from raw_data and from the typed fields: each is cast to
// float and added to x, so the output shows the decoded values.
TEST(OnnxInitializers, EveryTypeRawAndTyped) {
  struct Case {
    const char* name;
    int type;
    std::string raw;                   // little-endian bytes of the two values
    std::function<void(pb::TensorProto&)> typed;
    std::vector<float> values;
    TensorDType stored = TensorDType::F32;
  };
  auto bytes_of = [](const auto& v) {
    return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(v[0]));
  };
  const std::vector<Case> cases = {
      {"f32", 1, bytes_of(std::vector<float>{1.5f, -2.f}), [](pb::TensorProto& t) { t.add_float_data(1.5f); t.add_float_data(-2.f); }, {1.5f, -2.f}},
      {"f16", 10, bytes_of(std::vector<uint16_t>{0x3E00, 0xC000}), [](pb::TensorProto& t) { t.add_int32_data(0x3E00); t.add_int32_data(0xC000); }, {1.5f, -2.f}, TensorDType::F16},
      {"bf16", 16, bytes_of(std::vector<uint16_t>{0x3FC0, 0xC000}), [](pb::TensorProto& t) { t.add_int32_data(0x3FC0); t.add_int32_data(0xC000); }, {1.5f, -2.f}, TensorDType::BF16},
      {"f64", 11, bytes_of(std::vector<double>{1.5, -2.0}), [](pb::TensorProto& t) { t.add_double_data(1.5); t.add_double_data(-2.0); }, {1.5f, -2.f}},
      {"i64", 7, bytes_of(std::vector<int64_t>{3, -4}), [](pb::TensorProto& t) { t.add_int64_data(3); t.add_int64_data(-4); }, {3.f, -4.f}},
      {"i32", 6, bytes_of(std::vector<int32_t>{3, -4}), [](pb::TensorProto& t) { t.add_int32_data(3); t.add_int32_data(-4); }, {3.f, -4.f}},
      {"bool", 9, bytes_of(std::vector<uint8_t>{1, 0}), [](pb::TensorProto& t) { t.add_int32_data(1); t.add_int32_data(0); }, {1.f, 0.f}},
      {"u8", 2, bytes_of(std::vector<uint8_t>{3, 200}), [](pb::TensorProto& t) { t.add_int32_data(3); t.add_int32_data(200); }, {3.f, 200.f}},
      {"i8", 3, bytes_of(std::vector<int8_t>{3, -100}), [](pb::TensorProto& t) { t.add_int32_data(3); t.add_int32_data(-100); }, {3.f, -100.f}},
  };
  for (const Case& c : cases) {
    for (bool raw : {true, false}) {
      pb::ModelProto m = relu_model();
      auto* g = m.mutable_graph();
      g->clear_node();
      g->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_value(2);
      g->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_value(1);
      auto* t = g->add_initializer();
      t->set_name("w");
      t->set_data_type(c.type);
      t->add_dims(2);
      if (raw) t->set_raw_data(c.raw);
      else c.typed(*t);
      auto* cast = add_node(g, "Cast", {"w"}, {"wf"}, "cast");
      auto* to = cast->add_attribute();
      to->set_name("to");
      to->set_type(pb::AttributeProto::INT);
      to->set_i(1);
      add_node(g, "Add", {"x", "wf"}, {"y"}, "add");
      const Model model = load_model_from_onnx_bytes(serialize(m), {}, c.name);
      auto [module, weights] = model.build(1);
      const auto out = testing::compile_and_run(module.lower(), Device::Reference, {{"x", {10.f, 20.f}}}, weights);
      EXPECT_EQ(out.at(0), (std::vector<float>{10.f + c.values[0], 20.f + c.values[1]})) << c.name << (raw ? " raw" : " typed");
      if (c.type == 1 || c.type == 10 || c.type == 16 || c.type == 11) {
        ASSERT_EQ(model.params().size(), 1u) << c.name;  // a float initializer is a weight
        EXPECT_EQ(model.params()[0].dtype, c.stored) << c.name;
      } else {
        EXPECT_TRUE(model.params().empty()) << c.name;  // integers are folded constants
      }
      // Raw bytes of the wrong length.
      if (raw) {
        t->set_raw_data(c.raw + "x");
        expect_load_error(serialize(m), ErrorCode::ParseError, "initializer 'w': raw_data holds");
      }
    }
  }
  // A type rungs does not read.
  pb::ModelProto m = relu_model();
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name("s");
  t->set_data_type(8);
  t->add_dims(1);
  t->add_string_data("a");
  expect_load_error(serialize(m), ErrorCode::Unsupported, "initializer 's': element type STRING is not supported");
}

// Graph inputs that are also initializers (older exporters list every weight as an input) are
// weights, not inputs; Constant nodes are folded.
TEST(OnnxInitializers, InputsThatAreInitializersAndConstantNodes) {
  pb::ModelProto m = relu_model();
  auto* g = m.mutable_graph();
  g->clear_node();
  add_float_init(g, "b", {2}, {1.f, 2.f});
  add_io(g->add_input(), "b", {"2"});
  auto* c = add_node(g, "Constant", {}, {"k"}, "three");
  auto* v = c->add_attribute();
  v->set_name("value_float");
  v->set_type(pb::AttributeProto::FLOAT);
  v->set_f(3.f);
  add_node(g, "Add", {"x", "b"}, {"xb"}, "add");
  add_node(g, "Mul", {"xb", "k"}, {"y"}, "mul");
  const Model model = load_model_from_onnx_bytes(serialize(m));
  ASSERT_EQ(model.inputs(1).size(), 1u);
  EXPECT_EQ(model.params().size(), 1u);
  auto [module, weights] = model.build(1);
  const auto out = testing::compile_and_run(module.lower(), Device::Reference, {{"x", {1.f, 1.f}}}, weights);
  EXPECT_EQ(out.at(0), (std::vector<float>{6.f, 9.f}));
}

TEST(OnnxBadFiles, AmbiguousBucketDim) {
  pb::ModelProto m = relu_model();
  auto* in = m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  in->mutable_dim(1)->set_dim_param("width");
  expect_load_error(serialize(m), ErrorCode::InvalidArgument,
                    "the bucket dim is ambiguous: the symbolic dims seq, width are left; choose one with "
                    "--bucket-dim NAME (LoadOptions::bucket_dim)");
  LoadOptions o;
  o.bucket_dim = "seq";
  expect_load_error(serialize(m), ErrorCode::InvalidArgument, "the symbolic dims width are neither the bucket dim", o);
  o.fix = {{"width", 2}};
  EXPECT_EQ(load_model_from_onnx_bytes(serialize(m), o).inputs(4).at(0).shape, (Shape{4, 2}));
}

}  // namespace
}  // namespace rungs
