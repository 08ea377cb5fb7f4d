// SPDX-License-Identifier: Apache-2.0
// Op mappings of the ONNX frontend that the torch-exported encoders do not reach, one small graph
// each, against values worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/import/onnx/onnx_proto.hpp"
#include "rungs/rungs.hpp"
#include "test_util.hpp"

namespace rungs {
namespace {

namespace pb = onnx_import::pb;

struct In {
  std::string name;
  Shape shape;
  std::vector<float> data;
  bool initializer = false;  // else a graph input (FLOAT, or INT64 when int64)
  bool int64 = false;
  std::vector<int64_t> int64_data = {};  // an INT64 initializer's values beyond float's range
};

// One node `op` over `ins` with attributes set by `attrs`, outputs `outs`; returns each output.
std::vector<std::vector<float>> run_node(const std::string& op, const std::vector<In>& ins,
                                         const std::function<void(pb::NodeProto&)>& attrs, size_t outs,
                                         int64_t opset = 17, std::vector<Shape>* out_shapes = nullptr) {
  pb::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(opset);
  auto* g = m.mutable_graph();
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name("n");
  std::vector<std::pair<std::string, std::vector<float>>> feed;
  for (const In& i : ins) {
    n->add_input(i.name);
    if (i.name.empty()) continue;
    if (i.initializer) {
      auto* t = g->add_initializer();
      t->set_name(i.name);
      t->set_data_type(i.int64 ? 7 : 1);
      for (auto d : i.shape) t->add_dims(d);
      for (int64_t v : i.int64_data) t->add_int64_data(v);
      for (float v : i.data) {
        if (i.int64) t->add_int64_data(static_cast<int64_t>(v));
        else t->add_float_data(v);
      }
    } else {
      auto* vi = g->add_input();
      vi->set_name(i.name);
      auto* tt = vi->mutable_type()->mutable_tensor_type();
      tt->set_elem_type(i.int64 ? 7 : 1);
      tt->mutable_shape();  // a scalar has a shape with no dims
      for (auto d : i.shape) tt->mutable_shape()->add_dim()->set_dim_value(d);
      feed.emplace_back(i.name, i.data);
    }
  }
  for (size_t o = 0; o < outs; ++o) {
    n->add_output("y" + std::to_string(o));
    auto* vi = g->add_output();
    vi->set_name("y" + std::to_string(o));
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(1);
  }
  if (attrs) attrs(*n);
  std::string bytes;
  m.SerializeToString(&bytes);
  const Model model = load_model_from_onnx_bytes(std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  auto [module, weights] = model.build(1);
  const Graph graph = module.lower();
  if (out_shapes)
    for (const auto& [name, s] : graph.outputs()) out_shapes->push_back(s);
  return testing::compile_and_run(graph, Device::Reference, feed, weights);
}

void attr_int(pb::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(pb::AttributeProto::INT);
  a->set_i(v);
}

void attr_ints(pb::NodeProto& n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(pb::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}

const std::vector<float> k2x3 = {1, 2, 3, 4, 5, 6};

TEST(OnnxOps, FlattenNegativeAxis) {
  std::vector<Shape> shapes;
  run_node("Flatten", {{"x", {2, 3, 1}, k2x3}}, [](pb::NodeProto& n) { attr_int(n, "axis", -1); }, 1, 17, &shapes);
  EXPECT_EQ(shapes.at(0), (Shape{6, 1}));
}

TEST(OnnxOps, GatherRuntimeIdsOnAnyAxisWithNegativeIds) {
  std::vector<Shape> shapes;
  const auto y = run_node("Gather", {{"x", {2, 3}, k2x3}, {"i", {2}, {2, -3}, false, true}},
                          [](pb::NodeProto& n) { attr_int(n, "axis", 1); }, 1, 17, &shapes);
  EXPECT_EQ(shapes.at(0), (Shape{2, 2}));
  EXPECT_EQ(y.at(0), (std::vector<float>{3, 1, 6, 4}));
}

TEST(OnnxOps, GatherFirstTokenIsASlice) {
  std::vector<Shape> shapes;
  const auto y = run_node("Gather", {{"x", {1, 3, 2}, k2x3}, {"i", {}, {0}, true, true}},
                          [](pb::NodeProto& n) { attr_int(n, "axis", 1); }, 1, 17, &shapes);
  EXPECT_EQ(shapes.at(0), (Shape{1, 2}));
  EXPECT_EQ(y.at(0), (std::vector<float>{1, 2}));
}

TEST(OnnxOps, SliceWithNegativeStepAtRunTime) {
  const auto y = run_node("Slice",
                          {{"x", {2, 3}, k2x3},
                           {"s", {1}, {-1}, true, true},
                           {"e", {1}, {-10}, true, true},
                           {"a", {1}, {1}, true, true},
                           {"p", {1}, {-2}, true, true}},
                          nullptr, 1);
  EXPECT_EQ(y.at(0), (std::vector<float>{3, 1, 6, 4}));
}

// Exporters write "to the end" as INT64_MAX and "to the start" as INT64_MIN; held as doubles
// they are +-2^63, which saturate back rather than overflow the conversion to int64.
TEST(OnnxOps, SliceToInt64LimitsMeansToTheEnds) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  auto y = run_node("Slice",
                    {{"x", {2, 3}, k2x3},
                     {"s", {1}, {1}, true, true},
                     {"e", {1}, {}, true, true, {kMax}},
                     {"a", {1}, {1}, true, true}},
                    nullptr, 1);
  EXPECT_EQ(y.at(0), (std::vector<float>{2, 3, 5, 6}));
  y = run_node("Slice",
               {{"x", {2, 3}, k2x3},
                {"s", {1}, {}, true, true, {kMax}},
                {"e", {1}, {}, true, true, {kMin}},
                {"a", {1}, {1}, true, true},
                {"p", {1}, {-1}, true, true}},
               nullptr, 1);
  EXPECT_EQ(y.at(0), (std::vector<float>{3, 2, 1, 6, 5, 4}));
}

TEST(OnnxOps, ClipWithBoundsAtRunTimeAndAsConstants) {
  auto y = run_node("Clip", {{"x", {6}, k2x3}, {"lo", {}, {2}}, {"hi", {}, {5}}}, nullptr, 1);
  EXPECT_EQ(y.at(0), (std::vector<float>{2, 2, 3, 4, 5, 5}));
  y = run_node("Clip", {{"x", {6}, k2x3}, {"", {}, {}}, {"hi", {}, {3}, true}}, nullptr, 1);
  EXPECT_EQ(y.at(0), (std::vector<float>{1, 2, 3, 3, 3, 3}));
}

TEST(OnnxOps, LayerNormalizationWithMeanAndInvStdDev) {
  std::vector<Shape> shapes;
  const auto y = run_node("LayerNormalization", {{"x", {2, 3}, k2x3}, {"g", {3}, {1, 1, 1}, true}, {"b", {3}, {0, 0, 0}, true}},
                          nullptr, 3, 17, &shapes);
  EXPECT_EQ(shapes.at(1), (Shape{2, 1}));
  EXPECT_EQ(y.at(1), (std::vector<float>{2, 5}));
  const float inv = 1.f / std::sqrt(2.f / 3.f + 1e-5f);
  EXPECT_NEAR(y.at(2).at(0), inv, 1e-5);
  EXPECT_NEAR(y.at(0).at(0), -inv, 1e-5);
}

TEST(OnnxOps, SoftmaxBeforeOpset13CoercesTo2D) {
  // axis 0 of [2, 3] at opset 11: one softmax over all 6 values.
  const auto y = run_node("Softmax", {{"x", {2, 3}, {0, 0, 0, 0, 0, 0}}}, [](pb::NodeProto& n) { attr_int(n, "axis", 0); }, 1, 11);
  for (float v : y.at(0)) EXPECT_NEAR(v, 1.f / 6.f, 1e-6);
  const auto z = run_node("Softmax", {{"x", {2, 3}, {0, 0, 0, 0, 0, 0}}}, [](pb::NodeProto& n) { attr_int(n, "axis", 0); }, 1, 13);
  for (float v : z.at(0)) EXPECT_NEAR(v, 0.5f, 1e-6);
}

TEST(OnnxOps, GemmTransposesAndScales) {
  const auto y = run_node("Gemm", {{"a", {1, 2}, {1, 2}}, {"b", {3, 2}, k2x3, true}, {"c", {3}, {1, 1, 1}, true}},
                          [](pb::NodeProto& n) {
                            attr_int(n, "transB", 1);
                            auto* a = n.add_attribute();
                            a->set_name("alpha");
                            a->set_type(pb::AttributeProto::FLOAT);
                            a->set_f(2.f);
                          },
                          1);
  EXPECT_EQ(y.at(0), (std::vector<float>{11, 23, 35}));  // 2 * [5, 11, 17] + 1
}

TEST(OnnxOps, ReduceWithAxesAsAttributeOrInput) {
  auto y = run_node("ReduceMax", {{"x", {2, 3}, k2x3}}, [](pb::NodeProto& n) { attr_ints(n, "axes", {1}); attr_int(n, "keepdims", 0); }, 1);
  EXPECT_EQ(y.at(0), (std::vector<float>{3, 6}));
  y = run_node("ReduceSum", {{"x", {2, 3}, k2x3}, {"ax", {1}, {0}, true, true}}, nullptr, 1);
  EXPECT_EQ(y.at(0), (std::vector<float>{5, 7, 9}));
  y = run_node("ReduceL2", {{"x", {2}, {3, 4}}}, nullptr, 1);
  EXPECT_EQ(y.at(0), (std::vector<float>{5}));
}

TEST(OnnxOps, SplitIntoParts) {
  const auto y = run_node("Split", {{"x", {6}, k2x3}, {"s", {2}, {2, 4}, true, true}}, nullptr, 2);
  EXPECT_EQ(y.at(0), (std::vector<float>{1, 2}));
  EXPECT_EQ(y.at(1), (std::vector<float>{3, 4, 5, 6}));
}

TEST(OnnxOps, WhereComparisonsAndNot) {
  auto y = run_node("Where", {{"c", {3}, {1, 0, 1}}, {"a", {3}, {1, 2, 3}}, {"b", {}, {-1}, true}}, nullptr, 1);
  EXPECT_EQ(y.at(0), (std::vector<float>{1, -1, 3}));
  y = run_node("Greater", {{"a", {3}, {1, 2, 3}}, {"b", {}, {2}, true}}, nullptr, 1);
  EXPECT_EQ(y.at(0), (std::vector<float>{0, 0, 1}));
  y = run_node("Not", {{"a", {3}, {1, 0, 1}}}, nullptr, 1);
  EXPECT_EQ(y.at(0), (std::vector<float>{0, 1, 0}));
  y = run_node("Pow", {{"a", {2}, {2, 3}}, {"b", {2}, {3, 2}}}, nullptr, 1);
  EXPECT_EQ(y.at(0), (std::vector<float>{8, 9}));
  y = run_node("Erf", {{"a", {1}, {0}}}, nullptr, 1);
  EXPECT_EQ(y.at(0), (std::vector<float>{0}));
}

TEST(OnnxOps, DropoutInferenceOnlyAndExpand) {
  auto y = run_node("Dropout", {{"x", {2}, {1, 2}}}, nullptr, 1);
  EXPECT_EQ(y.at(0), (std::vector<float>{1, 2}));
  testing::expect_error([&] { run_node("Dropout", {{"x", {2}, {1, 2}}, {"r", {}, {0.5f}, true}, {"t", {}, {1}, false}}, nullptr, 1); },
                        ErrorCode::Unsupported, "node 'n' (Dropout): Dropout in training mode is not supported");
  y = run_node("Expand", {{"x", {1, 2}, {1, 2}}, {"s", {2}, {2, 1}, true, true}}, nullptr, 1);
  EXPECT_EQ(y.at(0), (std::vector<float>{1, 2, 1, 2}));
}

}  // namespace
}  // namespace rungs
