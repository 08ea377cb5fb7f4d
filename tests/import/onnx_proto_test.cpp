// SPDX-License-Identifier: Apache-2.0
// The lite ONNX classes (core/import/onnx/onnx_proto.hpp, cmake/RungsProtobuf.cmake): a model
// written field by field reads back the same, files written by ONNX's own (full-runtime) tools
// parse, and bytes that are not a protobuf message are refused. Natively and in the wasm build.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <type_traits>
#include <vector>

#include "core/import/onnx/onnx_proto.hpp"

// The generated classes must be the lite ones: the full runtime's Message (reflection,
// DebugString) would add hundreds of KB to the wasm module.
#ifdef GOOGLE_PROTOBUF_MESSAGE_H__
#error "onnx_proto.hpp pulled in google/protobuf/message.h: the ONNX classes are not the lite ones"
#endif

namespace {

namespace pb = rungs::onnx_import::pb;

static_assert(std::is_base_of_v<google::protobuf::MessageLite, pb::ModelProto>);

pb::ModelProto small_model() {
  pb::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("rungs-test");
  auto* opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(14);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* in = g->add_input();
  in->set_name("x");
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(pb::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_param("seq");
  tt->mutable_shape()->add_dim()->set_dim_value(4);
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(pb::TensorProto::FLOAT);
  w->add_dims(4);
  const float values[4] = {1.0f, -2.0f, 0.5f, 3.0f};
  w->set_raw_data(reinterpret_cast<const char*>(values), sizeof(values));
  auto* n = g->add_node();
  n->set_op_type("Mul");
  n->set_name("mul0");
  n->add_input("x");
  n->add_input("w");
  n->add_output("y");
  auto* a = n->add_attribute();
  a->set_name("note");
  a->set_type(pb::AttributeProto::INTS);
  a->add_ints(-7);
  g->add_output()->set_name("y");
  return m;
}

TEST(OnnxProto, WrittenModelReadsBackField_by_field) {
  std::string bytes;
  ASSERT_TRUE(small_model().SerializeToString(&bytes));
  pb::ModelProto m;
  ASSERT_TRUE(m.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())));
  EXPECT_EQ(m.ir_version(), 8);
  ASSERT_EQ(m.opset_import_size(), 1);
  EXPECT_EQ(m.opset_import(0).version(), 14);
  const auto& g = m.graph();
  ASSERT_EQ(g.input_size(), 1);
  const auto& shape = g.input(0).type().tensor_type().shape();
  ASSERT_EQ(shape.dim_size(), 2);
  EXPECT_TRUE(shape.dim(0).has_dim_param());
  EXPECT_EQ(shape.dim(0).dim_param(), "seq");
  EXPECT_EQ(shape.dim(1).dim_value(), 4);
  ASSERT_EQ(g.initializer_size(), 1);
  EXPECT_EQ(g.initializer(0).raw_data().size(), 16u);
  float w2 = 0;
  std::memcpy(&w2, g.initializer(0).raw_data().data() + 4, 4);
  EXPECT_EQ(w2, -2.0f);
  ASSERT_EQ(g.node_size(), 1);
  EXPECT_EQ(g.node(0).op_type(), "Mul");
  EXPECT_EQ(g.node(0).attribute(0).ints(0), -7);
}

TEST(OnnxProto, RefusesBytesThatAreNotAMessage) {
  std::string bytes;
  ASSERT_TRUE(small_model().SerializeToString(&bytes));
  pb::ModelProto m;
  // Cut inside the last field (opset_import, length-delimited): the missing bytes are noticed.
  EXPECT_FALSE(m.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()) - 3));
  const std::string garbage = "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff";
  EXPECT_FALSE(m.ParseFromString(garbage));
  // A length prefix far past the end.
  const std::string long_len = std::string("\x3a\xff\xff\xff\x0f", 5) + "abc";  // field 7 (graph)
  EXPECT_FALSE(m.ParseFromString(long_len));
}

// ONNX's own node tests (Debian's libonnx-testdata, written by onnx's full-runtime Python
// classes): every model parses and names its op. Read from the host's files in the wasm build too
// (NODERAWFS).
TEST(OnnxProto, ParsesOnnxNodeTestModels) {
  const std::filesystem::path root = "/usr/share/libonnx-testdata/data/node";
  if (!std::filesystem::exists(root)) GTEST_SKIP() << root << " missing: apt-get install libonnx-testdata";
  int parsed = 0;
  for (const char* name : {"test_matmul_2d", "test_softmax_axis_1", "test_gather_0",
                           "test_layer_normalization_2d_axis0", "test_where_example"}) {
    const auto file = root / name / "model.onnx";
    std::ifstream in(file, std::ios::binary);
    ASSERT_TRUE(in) << file;
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    pb::ModelProto m;
    ASSERT_TRUE(m.ParseFromString(bytes)) << file;
    ASSERT_GT(m.graph().node_size(), 0) << file;
    EXPECT_FALSE(m.graph().node(0).op_type().empty()) << file;
    EXPECT_GT(m.opset_import_size(), 0) << file;
    // Round trip: our serialisation parses back to the same bytes.
    std::string again;
    ASSERT_TRUE(m.SerializeToString(&again));
    pb::ModelProto m2;
    ASSERT_TRUE(m2.ParseFromString(again));
    std::string again2;
    ASSERT_TRUE(m2.SerializeToString(&again2));
    EXPECT_EQ(again, again2) << file;
    ++parsed;
  }
  EXPECT_EQ(parsed, 5);
}

}  // namespace
