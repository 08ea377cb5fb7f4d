// SPDX-License-Identifier: Apache-2.0
// CompiledGraph::profile: one entry per kernel, the run's work, and the usual input checks.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/compile/executor.hpp"
#include "rungs/rungs.hpp"

namespace rungs {
namespace {

TEST(Profile, OneEntryPerKernelWithTheProductsFlops) {
  Graph g;
  Value x = g.input("x", {8, 16});
  g.output("y", g.softmax(g.matmul(x, g.param("w", {16, 4})), -1));
  CompileOptions opt;
  opt.threads = 1;
  CompiledGraph c = Session(Device::Cpu).compile(g, opt);
  c.set_param("w", std::vector<float>(64, 0.5f));
  std::vector<float> xs(128, 1.f);
  const NamedInput in[] = {{"x", xs}};
  const std::vector<KernelProfile> prof = c.profile(in, 3);
  ASSERT_EQ(prof.size(), c.report().kernels.size());
  for (size_t i = 0; i < prof.size(); ++i) {
    EXPECT_EQ(prof[i].op, c.report().kernels[i].op);
    EXPECT_EQ(prof[i].kernel, c.report().kernels[i].kernel);
    EXPECT_GE(prof[i].ms, 0.0);
    EXPECT_GT(prof[i].bytes, 0.0);
  }
  EXPECT_EQ(prof.front().flops, 2.0 * 8 * 16 * 4);                 // the product
  EXPECT_EQ(prof.front().bytes, 4.0 * (8 * 16 + 16 * 4 + 8 * 4));  // x, w, its output
  EXPECT_EQ(prof.back().flops, 0.0);                               // softmax: bytes only
}

TEST(Profile, ChecksInputsAndRepetitionsLikeRun) {
  Graph g;
  g.output("y", g.relu(g.input("x", {2, 3})));
  CompiledGraph c = Session(Device::Cpu).compile(g);
  std::vector<float> short_x(5, 1.f), x(6, 1.f);
  const NamedInput bad[] = {{"x", short_x}};
  try {
    c.profile(bad, 2);
    FAIL() << "a wrong size must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::ShapeMismatch);
    EXPECT_NE(std::string(e.what()).find("profile: input 'x' has 5 values, expected 6"), std::string::npos) << e.what();
  }
  const NamedInput good[] = {{"x", x}};
  try {
    c.profile(good, 0);
    FAIL() << "zero repetitions must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::OutOfRange);
    EXPECT_NE(std::string(e.what()).find("repetitions must be in [1, 100000], got 0"), std::string::npos);
  }
  EXPECT_EQ(c.run(good)[0], std::vector<float>(6, 1.f));  // still usable
}

// A row segment's wall time goes to its kernels in proportion to their first-range times, so the
// profile adds up to the run even when the other threads' ranges finish later.
TEST(Profile, SegmentWallTimeIsSharedByTheFirstRangesTimes) {
  const std::vector<double> first = {100, 300, 0, 600};
  const std::vector<double> shared = compile::share_wall_time(first, 1500);
  ASSERT_EQ(shared.size(), 4u);
  EXPECT_DOUBLE_EQ(shared[0], 150);
  EXPECT_DOUBLE_EQ(shared[1], 450);
  EXPECT_DOUBLE_EQ(shared[2], 0);
  EXPECT_DOUBLE_EQ(shared[3], 900);
  // No time measured on the first range (a clock too coarse): equal shares, still the whole wall.
  const std::vector<double> zeros = {0, 0};
  EXPECT_EQ(compile::share_wall_time(zeros, 80), (std::vector<double>{40, 40}));
  EXPECT_TRUE(compile::share_wall_time({}, 80).empty());
}

// On two threads this chain runs as one row segment, each thread on its own rows; every kernel of
// it gets its share of the segment's wall time.
TEST(Profile, KernelsOfARowSegmentShareItsWallTime) {
  Graph g;
  Value x = g.input("x", {256, 64});
  Value h = g.gelu(g.matmul(x, g.param("w", {64, 64})));
  g.output("y", g.layer_norm(g.add(h, x), g.param("gamma", {64}), g.param("beta", {64})));
  CompileOptions opt;
  opt.threads = 2;
  CompiledGraph c = Session(Device::Cpu).compile(g, opt);
  // Row segments exist only where threads can split them (one thread in single-threaded wasm).
  if (c.report().threads < 2) GTEST_SKIP() << "one thread on this build";
  c.set_param("w", std::vector<float>(64 * 64, 0.01f));
  c.set_param("gamma", std::vector<float>(64, 1.f));
  c.set_param("beta", std::vector<float>(64, 0.f));
  std::vector<float> xs(256 * 64, 0.5f);
  const NamedInput in[] = {{"x", xs}};
  const std::vector<KernelProfile> prof = c.profile(in, 3);
  const auto& kernels = c.report().kernels;
  ASSERT_EQ(prof.size(), kernels.size());
  int segmented = 0;
  for (size_t i = 0; i < prof.size(); ++i) {
    if (kernels[i].row_segment < 0) continue;
    ++segmented;
    EXPECT_GT(prof[i].ms, 0.0) << prof[i].kernel;
  }
  EXPECT_GE(segmented, 2) << c.report().to_text();
}

}  // namespace
}  // namespace rungs
