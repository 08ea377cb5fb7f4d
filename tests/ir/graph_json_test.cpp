// SPDX-License-Identifier: Apache-2.0
// Graph JSON: every op round-trips (text and outputs), malformed files give Error(ParseError)
// naming the field, and invalid graphs are refused by the builder's own checks.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "core/ir/graph_access.hpp"
#include "test_util.hpp"

namespace {

using namespace rungs;
using rungs::testing::expect_error;
using json = nlohmann::json;

// A graph that uses every builder op at least once (the test below checks that claim).
Graph every_op() {
  Graph g;
  auto x = g.input("x", {2, 3, 4});
  auto w = g.param("w", {4, 4});
  const float inf = std::numeric_limits<float>::infinity();
  auto c = g.constant({0.5f, -inf, 1e-30f, 3.f}, {4});
  auto ids = g.input("ids", {2, 3});
  auto mask = g.input("mask", {2, 3});
  auto table = g.param("table", {5, 4});
  auto mm = g.matmul(x, w);
  auto e = g.add(mm, g.maximum(c, g.constant({-2.f}, {1})));
  e = g.sub(e, g.minimum(x, mm));
  e = g.mul(e, g.div(x, g.add(g.abs(x), g.constant({1.f}, {1}))));
  Value u = e;
  u = g.relu(u);
  u = g.add(u, g.gelu(e));
  u = g.add(u, g.gelu_tanh(e));
  u = g.add(u, g.silu(e));
  u = g.add(u, g.sigmoid(e));
  u = g.add(u, g.tanh(e));
  u = g.add(u, g.neg(g.exp(g.neg(g.abs(e)))));
  u = g.add(u, g.log(g.add(g.abs(e), g.constant({1.f}, {1}))));
  u = g.add(u, g.sqrt(g.abs(e)));
  u = g.add(u, g.rsqrt(g.add(g.abs(e), g.constant({1.f}, {1}))));
  u = g.add(u, g.pow(g.abs(e), g.constant({0.5f, 2.f, 1.f, 3.f}, {4})));
  u = g.add(u, g.add(g.erf(e), g.mul(g.sin(e), g.cos(e))));
  auto cmp = g.add(g.add(g.equal(e, x), g.less(e, x)), g.greater(e, x));
  cmp = g.add(cmp, g.add(g.less_equal(e, c), g.greater_equal(e, c)));
  u = g.add(u, g.where(g.logical_not(cmp), e, g.constant({-1.f}, {1})));
  auto sm = g.softmax(u, 1);
  auto ln = g.layer_norm(sm, g.param("gamma", {4}), g.param("beta", {4}), 1e-3f);
  auto rn = g.rms_norm(ln, g.param("g2", {4}), 1e-4f);
  g.output("sum", g.sum(rn, {0, 2}, true));
  g.output("mean", g.mean(rn, {-1}));
  g.output("max", g.max(rn, {1}));
  auto t = g.transpose(g.reshape(rn, {2, 12}), {1, 0});
  g.output("slice", g.slice(t, 0, 3, 5));
  g.output("concat", g.concat({rn, x, mm}, 2));
  auto emb = g.gather(table, ids);
  AttentionOptions opt;
  opt.heads = 2;
  opt.causal = true;
  opt.key_mask = mask;
  opt.scale = 0.3f;
  g.output("attn", g.attention(emb, rn, x, opt));
  g.output("attn_plain", g.attention(rn, x, emb, {}));
  return g;
}

TEST(GraphJson, EveryOpIsCovered) {
  Graph g = every_op();
  std::set<ir::Op> seen;
  for (const ir::Node& n : ir::impl_of(g).nodes) seen.insert(n.op);
  for (int i = 0; i <= static_cast<int>(ir::Op::FusedAddNorm); ++i) {
    auto op = static_cast<ir::Op>(i);
    if (ir::op_info(op).cls == ir::OpClass::Fused) continue;
    EXPECT_TRUE(seen.count(op)) << "every_op() does not use " << ir::op_name(op);
  }
}

TEST(GraphJson, RoundTripKeepsTextAndOutputs) {
  Graph g = every_op();
  std::string text = g.to_json();
  Graph back = Graph::from_json(text);
  EXPECT_EQ(back.to_text(), g.to_text());
  EXPECT_EQ(back.to_json(), text);
  // constants survive exactly, non-finite values included
  const ir::Node& c = ir::impl_of(back).nodes[2];
  ASSERT_EQ(c.op, ir::Op::Constant);
  EXPECT_EQ((*c.data)[0], 0.5f);
  EXPECT_TRUE(std::isinf((*c.data)[1]) && (*c.data)[1] < 0);
  EXPECT_EQ((*c.data)[2], 1e-30f);
  // attention options survive
  const ir::Node& att = ir::impl_of(back).nodes[ir::impl_of(back).outputs[5].second];
  EXPECT_EQ(att.heads, 2);
  EXPECT_TRUE(att.causal);
  EXPECT_TRUE(att.has_mask);
  EXPECT_EQ(att.scale, 0.3f);
  const ir::Node& plain = ir::impl_of(back).nodes[ir::impl_of(back).outputs[6].second];
  EXPECT_EQ(plain.heads, 1);
  EXPECT_FALSE(plain.causal || plain.has_mask || plain.scale.has_value());

  // outputs: run both on the reference backend with the same params and inputs
  CompiledGraph a = Session(Device::Reference).compile(g), b = Session(Device::Reference).compile(back);
  uint32_t seed = 1;
  for (const std::string& name : a.param_names()) {
    auto data = rungs::testing::random_vector(static_cast<size_t>(shape_numel(a.param_shape(name))), seed++);
    a.set_param(name, data);
    b.set_param(name, data);
  }
  std::vector<float> xv = rungs::testing::random_vector(24, 99), ids{0, 4, 2, 1, 3, 4}, mask{1, 0, 1, 1, 1, 0};
  std::vector<NamedInput> in{{"x", xv}, {"ids", ids}, {"mask", mask}};
  auto ra = a.run(in), rb = b.run(in);
  ASSERT_EQ(ra.size(), 7u);
  for (size_t i = 0; i < ra.size(); ++i) {
    EXPECT_EQ(ra[i], rb[i]) << "output " << i;
    for (float v : ra[i]) EXPECT_TRUE(std::isfinite(v)) << "output " << i;
  }
}

TEST(GraphJson, NanAndInfinityConstants) {
  Graph g;
  const float inf = std::numeric_limits<float>::infinity();
  g.output("c", g.constant({std::nanf(""), inf, -inf, -0.f}, {2, 2}));
  Graph back = Graph::from_json(g.to_json());
  const auto& d = *ir::impl_of(back).nodes[0].data;
  EXPECT_TRUE(std::isnan(d[0]));
  EXPECT_EQ(d[1], inf);
  EXPECT_EQ(d[2], -inf);
  EXPECT_TRUE(std::signbit(d[3]));
}

// A valid base document, mutated by each case.
json base() {
  Graph g;
  auto x = g.input("x", {2, 3});
  auto w = g.param("w", {3, 4});
  auto c = g.constant({1.f}, {1});
  g.output("y", g.softmax(g.add(g.matmul(x, w), c)));
  return json::parse(g.to_json());
}

void expect_parse_error(const json& j, const std::string& needle) {
  expect_error([&] { Graph::from_json(j.dump()); }, ErrorCode::ParseError, needle);
}

TEST(GraphJson, BaseDocumentIsValid) { EXPECT_NO_THROW(Graph::from_json(base().dump())); }

TEST(GraphJson, NumbersPastTheF32RangeAreRefused) {
  // Converting 1e300 to float is undefined behaviour: refused with the field named instead.
  const std::string doc =
      R"({"nodes": [{"op": "input", "name": "q", "shape": [1, 2, 2]},
                    {"op": "attention", "in": [0, 0, 0], "scale": 1e300}], "outputs": [{"name": "y", "node": 1}]})";
  expect_error([&] { Graph::from_json(doc); }, ErrorCode::ParseError,
               "nodes[1].scale: expected a number within the f32 range, got 1e+300");
  // Found by fuzz_graph_json: past the double range the JSON parser itself throws (out_of_range),
  // which escaped as a non-rungs exception.
  expect_error([] { Graph::from_json(R"({"nodes": [], "outputs": [], "version": 1e3006})"); }, ErrorCode::ParseError,
               "graph JSON: not valid JSON: [json.exception.out_of_range.406] number overflow parsing '1e3006'");
  const std::string data = R"({"nodes": [{"op": "constant", "shape": [2], "data": [1, -1e39]}], "outputs": []})";
  expect_error([&] { Graph::from_json(data); }, ErrorCode::ParseError, "nodes[0].data[1]: expected a number within the f32 range");
  const std::string eps = R"({"nodes": [{"op": "input", "name": "x", "shape": [2]}, {"op": "param", "name": "g", "shape": [2]},
                                        {"op": "rms_norm", "in": [0, 1], "eps": 3.5e38}], "outputs": []})";
  expect_error([&] { Graph::from_json(eps); }, ErrorCode::ParseError, "nodes[2].eps: expected a number within the f32 range");
}

TEST(GraphJson, MalformedDocumentsNameTheField) {
  expect_error([] { Graph::from_json("{\"nodes\": [}"); }, ErrorCode::ParseError, "not valid JSON");
  expect_error([] { Graph::from_json(""); }, ErrorCode::ParseError, "not valid JSON");
  expect_error([] { Graph::from_json("[1, 2]"); }, ErrorCode::ParseError, "top level");
  {
    json j = base();
    j.erase("nodes");
    expect_parse_error(j, "nodes: expected an array");
  }
  {
    json j = base();
    j["outputs"] = 3;
    expect_parse_error(j, "outputs: expected an array");
  }
  {
    json j = base();
    j["version"] = 2;
    expect_parse_error(j, "version: expected 1, got 2");
  }
  {
    json j = base();
    j["nodes"][3]["op"] = "foo";
    expect_parse_error(j, "nodes[3].op: unknown op 'foo'");
  }
  {
    json j = base();
    j["nodes"][3]["op"] = 7;
    expect_parse_error(j, "nodes[3].op: expected a string");
  }
  {
    json j = base();
    j["nodes"][1] = "param";
    expect_parse_error(j, "nodes[1]: expected an object");
  }
  {
    json j = base();
    j["nodes"][5]["axis"] = "last";
    expect_parse_error(j, "nodes[5].axis: expected an integer");
  }
  {
    json j = base();
    j["nodes"][0]["shape"][1] = 2.5;
    expect_parse_error(j, "nodes[0].shape[1]: expected an integer");
  }
  {
    json j = base();
    j["nodes"][0].erase("name");
    expect_parse_error(j, "nodes[0].name: missing");
  }
  {
    json j = base();
    j["nodes"][3]["eps"] = 0.1;
    expect_parse_error(j, "nodes[3].eps: unknown field for op 'matmul'");
  }
  {
    json j = base();
    j["nodes"][3]["op"] = "fused_matmul";
    expect_parse_error(j, "nodes[3].op: 'fused_matmul' is a fused op");
  }
  {
    json j = base();
    j["nodes"][2]["data"][0] = "one";
    expect_parse_error(j, "nodes[2].data[0]: expected a number");
  }
  {
    json j = base();
    j["nodes"][4]["in"] = json::array({3});
    expect_parse_error(j, "nodes[4].in: add takes 2 input(s), got 1");
  }
  {
    json j = base();
    j["outputs"][0]["node"] = 17;
    expect_parse_error(j, "outputs[0].node: expected the index of a node");
  }
  {
    json j = base();
    j["outputs"].push_back(j["outputs"][0]);
    expect_parse_error(j, "outputs[1]: output: the name 'y' is already used");
  }
}

TEST(GraphJson, InvalidGraphsAreRefusedByTheBuilder) {
  {  // forward reference
    json j = base();
    j["nodes"][3]["in"][0] = 4;
    expect_parse_error(j, "nodes[3].in[0]: refers to node 4, which does not come before this node");
  }
  {  // dangling reference
    json j = base();
    j["nodes"][4]["in"][1] = 99;
    expect_parse_error(j, "nodes[4].in[1]: refers to node 99");
  }
  {  // negative reference
    json j = base();
    j["nodes"][4]["in"][1] = -1;
    expect_parse_error(j, "nodes[4].in[1]: refers to node -1");
  }
  {  // bad shapes: the builder's own message, prefixed with the node
    json j = base();
    j["nodes"][1]["shape"] = json::array({5, 4});
    expect_parse_error(j, "nodes[3] (matmul): matmul: inner dimensions differ: a [2, 3] x b [5, 4]");
  }
  {
    json j = base();
    j["nodes"][0]["shape"] = json::array({2, 0});
    expect_parse_error(j, "nodes[0] (input): input 'x': shape [2, 0] has a dimension < 1");
  }
  {
    json j = base();
    j["nodes"][2]["shape"] = json::array({2});
    expect_parse_error(j, "nodes[2] (constant): constant: 1 values given for shape [2]");
  }
  {
    json j = base();
    j["nodes"][5]["axis"] = 2;
    expect_parse_error(j, "nodes[5] (softmax): softmax: axis 2 is out of range");
  }
  {
    json j = base();
    j["nodes"][1]["name"] = "x";
    expect_parse_error(j, "nodes[1] (param): param: the name 'x' is already used");
  }
}

TEST(GraphJson, FusedGraphsCannotBeSaved) {
  Graph g;
  auto x = g.input("x", {2});
  g.output("y", x);
  ir::Node fused;
  fused.op = ir::Op::FusedElementwise;
  fused.in = {0};
  fused.shape = {2};
  ir::impl_of(g).add(fused);
  expect_error([&] { (void)g.to_json(); }, ErrorCode::Unsupported, "fused op");
}

}  // namespace
