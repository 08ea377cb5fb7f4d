// SPDX-License-Identifier: Apache-2.0
// Session / CompiledGraph: the vertical slice and every error of run and set_param (api.md 4).
#include <gtest/gtest.h>

#include "test_util.hpp"

#include <cmath>
#include <thread>

#include "rungs/rungs.hpp"

namespace {

using namespace rungs;

using rungs::testing::expect_error;

class RunTest : public ::testing::TestWithParam<Device> {};

TEST_P(RunTest, ReluSliceValues) {
  Graph g;
  auto x = g.input("x", {3, 5});
  g.output("y", g.relu(x));
  CompiledGraph c = Session(GetParam()).compile(g);
  std::vector<float> in(15);
  for (int i = 0; i < 15; ++i) in[i] = static_cast<float>(i) - 7.f;
  NamedInput ni{"x", in};
  auto out = c.run({&ni, 1});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].size(), 15u);
  for (int i = 0; i < 15; ++i) EXPECT_EQ(out[0][i], std::max(in[i], 0.f));
  EXPECT_EQ(c.input_names(), std::vector<std::string>{"x"});
  EXPECT_EQ(c.output_names(), std::vector<std::string>{"y"});
  EXPECT_EQ(c.output_shape("y"), (Shape{3, 5}));
}

TEST_P(RunTest, RunErrorsLeaveGraphUsable) {
  Graph g;
  auto x = g.input("x", {16, 64});
  auto w = g.param("w", {64, 2});
  g.output("y", g.matmul(x, w));
  CompiledGraph c = Session(GetParam()).compile(g);
  std::vector<float> good(1024, 1.f), bad(640, 1.f), wv(128, 0.5f);
  NamedInput ok{"x", good};
  expect_error([&] { c.run({&ok, 1}); }, ErrorCode::ParamNotSet, "param 'w' [64, 2] was never set");
  expect_error([&] { c.set_param("v", wv); }, ErrorCode::UnknownName, "unknown param 'v'");
  expect_error([&] { c.set_param("w", std::vector<float>(3)); }, ErrorCode::ShapeMismatch,
               "param 'w' got 3 values, expected 128 ([64, 2])");
  c.set_param("w", wv);
  NamedInput wrong{"x", bad};
  expect_error([&] { c.run({&wrong, 1}); }, ErrorCode::ShapeMismatch, "input 'x' has 640 values, expected 1024 ([16, 64])");
  NamedInput unknown{"z", good};
  expect_error([&] { c.run({&unknown, 1}); }, ErrorCode::UnknownName, "unknown input 'z'");
  expect_error([&] { c.run({}); }, ErrorCode::MissingInput, "input 'x' [16, 64] was not given");
  auto out = c.run({&ok, 1});
  ASSERT_EQ(out[0].size(), 32u);
  for (float v : out[0]) EXPECT_FLOAT_EQ(v, 32.f);
}

TEST_P(RunTest, ConcurrentRuns) {
  RUNGS_SKIP_WITHOUT_THREADS();
  Graph g;
  auto x = g.input("x", {64, 32});
  auto w = g.param("w", {32, 32});
  g.output("y", g.relu(g.matmul(x, w)));
  CompiledGraph c = Session(GetParam()).compile(g);
  std::vector<float> wv(32 * 32);
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = std::sin(static_cast<float>(i));
  c.set_param("w", wv);
  auto run_with = [&](float s) {
    std::vector<float> in(64 * 32);
    for (size_t i = 0; i < in.size(); ++i) in[i] = s * std::cos(static_cast<float>(i));
    NamedInput ni{"x", in};
    return c.run({&ni, 1})[0];
  };
  std::vector<std::vector<float>> expect;
  for (int t = 0; t < 4; ++t) expect.push_back(run_with(static_cast<float>(t + 1)));
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < 20; ++r) ok[t] += run_with(static_cast<float>(t + 1)) == expect[t];
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(ok[t], 20);
}

INSTANTIATE_TEST_SUITE_P(Devices, RunTest, ::testing::Values(Device::Reference, Device::Cpu),
                         [](const auto& info) { return to_string(info.param); });

TEST(Compile, NoOutputsIsAnError) {
  Graph g;
  g.input("x", {2});
  expect_error([&] { Session(Device::Cpu).compile(g); }, ErrorCode::InvalidArgument, "no outputs");
}

TEST(Version, IsSemver) {
  std::string v(version());
  EXPECT_EQ(std::count(v.begin(), v.end(), '.'), 2) << v;
}

TEST(Run, IntegerAndBoolInputsConvertExactly) {
  Graph g;
  Value ids = g.input("ids", {2, 3});
  Value mask = g.input("mask", {2, 3});
  g.output("y", g.mul(ids, mask));
  for (Device device : {Device::Cpu, Device::Reference}) {
    CompiledGraph c = Session(device).compile(g);
    const std::vector<int64_t> i64{0, 1, -7, 16777216, -16777216, 12345};
    const std::vector<int32_t> i32{3, 1, -7, 16777216, -16777216, 42};
    const bool keep[] = {true, false, true, true, true, false};
    const std::vector<uint8_t> bytes{1, 0, 255, 1, 1, 0};  // any non-zero byte is true
    const std::vector<float> f32{1, 1, 1, 1, 1, 1};
    const NamedInput a[] = {{"ids", i64}, {"mask", keep}};
    EXPECT_EQ(c.run(a)[0], (std::vector<float>{0, 0, -7, 16777216.f, -16777216.f, 0}));
    const NamedInput b[] = {{"ids", i32}, {"mask", TensorView::bool_bytes(bytes)}};
    EXPECT_EQ(c.run(b)[0], (std::vector<float>{3, 0, -7, 16777216.f, -16777216.f, 0}));
    const NamedInput d[] = {{"ids", i64}, {"mask", f32}};  // floats unchanged
    EXPECT_EQ(c.run(d)[0], (std::vector<float>{0, 1, -7, 16777216.f, -16777216.f, 12345}));
    EXPECT_EQ(TensorView(i64).dtype(), ElementType::I64);
    EXPECT_EQ(TensorView(keep).dtype(), ElementType::Bool);
    EXPECT_EQ(TensorView(f32).dtype(), ElementType::F32);
    EXPECT_EQ(to_string(ElementType::I32), "i32");
    // Past 2^24 an integer is refused, naming the input, the value and its index.
    const std::vector<int64_t> big{0, 1, 2, 3, 4, int64_t{1} << 40};
    const NamedInput e[] = {{"ids", big}, {"mask", keep}};
    expect_error([&] { c.run(e); }, ErrorCode::InvalidArgument,
                 "run: input 'ids' holds 1099511627776 at index 5, which f32 cannot hold exactly");
    const std::vector<int32_t> odd{16777217, 0, 0, 0, 0, 0};
    const NamedInput f[] = {{"ids", odd}, {"mask", keep}};
    expect_error([&] { c.run(f); }, ErrorCode::InvalidArgument, "holds 16777217 at index 0");
    // Sizes are checked in elements whatever the type.
    const std::vector<int64_t> short_ids{1, 2};
    const NamedInput s2[] = {{"ids", short_ids}, {"mask", keep}};
    expect_error([&] { c.run(s2); }, ErrorCode::ShapeMismatch, "input 'ids' has 2 values, expected 6");
    // run_rows converts the same way.
    ASSERT_TRUE(c.prepare_active_rows(2));
    const NamedInput r[] = {{"ids", std::span<const int64_t>(i64).first(3)}, {"mask", std::span<const bool>(keep).first(3)}};
    EXPECT_EQ(c.run_rows(r, 1)[0], (std::vector<float>{0, 0, -7}));
  }
}

}  // namespace
