// SPDX-License-Identifier: Apache-2.0
// Row segments (core/passes/row_segments.hpp): which kernels a multi-threaded run splits by rows,
// that the memory plan keeps a segment's buffers apart, and that the split runs compute what one
// thread does, at the compiled rows and under active extent.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/compile/pipeline.hpp"
#include "core/ir/graph_access.hpp"
#include "core/passes/memory_plan.hpp"
#include "core/passes/row_segments.hpp"
#include "rungs/rungs.hpp"
#include "test_models.hpp"
#include "test_util.hpp"

namespace {

using namespace rungs;
namespace rt = rungs::testing;
using rungs::testing::max_rel_error;

// An encoder whose products are large enough for a run of 9 or more rows to use two threads
// natively (executor.cpp: 1 MFLOP a product on average with segments).
rt::EncoderConfig wide() {
  rt::EncoderConfig c;
  c.dim = 256;
  c.hidden = 512;
  return c;
}

CompiledGraph compile(const HirModule& m, int threads, Device device = Device::Cpu) {
  CompileOptions o;
  o.threads = threads;
  CompiledGraph c = Session(device).compile_hir(m, o);
  for (const auto& [n, v] : rt::random_params(m, 3)) c.set_param(n, v);
  return c;
}

// The IR a compile of `m` plans (lowered, then the pass pipeline with default options).
ir::GraphImpl compiled_ir(const HirModule& m) {
  Graph lowered = m.lower();
  ir::GraphImpl g = ir::impl_of(lowered);
  CompileOptions o;
  std::vector<PassReport> reports;
  compile::run_pipeline(g, o, reports);
  return g;
}

// Kernels per segment, from the report.
std::vector<int> segment_sizes(const CompileReport& r) {
  std::vector<int> sizes;
  for (const KernelReport& k : r.kernels)
    if (k.row_segment >= 0) {
      if (sizes.size() <= static_cast<size_t>(k.row_segment)) sizes.resize(k.row_segment + 1, 0);
      ++sizes[k.row_segment];
    }
  return sizes;
}

TEST(RowSegmentThreads, TheEncoderSplitsBetweenAttentions) {
  const HirModule enc = rt::make_encoder(32, wide());
  const CompileReport r = compile(enc, 2).report();
  if (r.threads < 2) GTEST_SKIP() << "one thread on this build";
  // Embedding + the first layer's norm and q, k, v; then from each attention's output projection
  // to the next attention's q, k, v (or the final norm, the pooling's mask product and its sum
  // over the rows).
  const std::vector<int> sizes = segment_sizes(r);
  ASSERT_EQ(sizes.size(), 3u) << r.to_text();
  for (int s : sizes) EXPECT_GE(s, 2);
  int last = -1;
  std::vector<const KernelReport*> sums;
  for (const KernelReport& k : r.kernels) {
    if (k.op == "attention") EXPECT_EQ(k.row_segment, -1) << k.kernel << " reads every row";
    if (k.op == "sum") sums.push_back(&k);
    if (k.row_segment >= 0) {
      EXPECT_GE(k.row_segment, last) << "segments are consecutive";
      last = k.row_segment;
    }
  }
  // The pooled sum (one value a column) ends the last segment, each thread summing its own rows;
  // the mask's count (one value a row) is not split.
  ASSERT_EQ(sums.size(), 2u) << r.to_text();
  EXPECT_EQ(sums[0]->shape, (Shape{1, 256}));
  EXPECT_EQ(sums[0]->row_segment, 2);
  for (const KernelReport* k = sums[0] + 1; k != r.kernels.data() + r.kernels.size(); ++k)
    EXPECT_EQ(k->row_segment, -1) << k->kernel << ": the sum is the last split kernel";
  EXPECT_EQ(sums[1]->shape, (Shape{1, 1}));
  EXPECT_EQ(sums[1]->row_segment, -1);
  // One thread, and the reference device, split nothing.
  for (const CompileReport& one : {compile(enc, 1).report(), compile(enc, 2, Device::Reference).report()})
    for (const KernelReport& k : one.kernels) EXPECT_EQ(k.row_segment, -1) << k.kernel;
}

TEST(RowSegmentThreads, OnlyRowLocalStretchesOfTwoKernelsOrMore) {
  const Shape w{16, 16};
  {  // after a transpose the rows have 16 columns before them: a range of rows is no one block
    Graph g;
    Value x = g.input("x", {8, 16});
    Value t = g.transpose(g.relu(g.matmul(x, g.param("a", w))), {1, 0});  // [16, 8]
    g.output("y", g.exp(g.relu(t)));
    const ir::GraphImpl& gi = ir::impl_of(g);
    const passes::RowSegments s = passes::find_row_segments(gi);
    ASSERT_EQ(s.segments.size(), 1u);
    EXPECT_EQ(gi.nodes[s.segments[0].first].op, ir::Op::MatMul);
    EXPECT_EQ(gi.nodes[s.segments[0].last].op, ir::Op::Relu);
  }
  {  // a mean over the rows ends the first stretch as its last node (each thread reduces its own
     // rows), the sigmoid of the mean (no rows) does not start one, and a transpose ends the second
    Graph g;
    Value x = g.input("x", {8, 16});
    Value h = g.exp(g.relu(g.matmul(x, g.param("a", w))));
    Value pooled = g.mean(h, {0}, true);                                   // [1, 16]
    Value y = g.transpose(g.tanh(g.mul(h, g.sigmoid(pooled))), {1, 0});  // [16, 8]
    g.output("y", g.neg(g.abs(y)));
    const ir::GraphImpl& gi = ir::impl_of(g);
    const passes::RowSegments s = passes::find_row_segments(gi);
    ASSERT_EQ(s.segments.size(), 2u);
    // Nothing when the rows are not tracked: a sum over rows of a value that padding changes makes
    // active extent (and so the row analysis) refuse the graph.
    Graph summed;
    Value sx = summed.input("x", {8, 16});
    summed.output("y", summed.exp(summed.sum(summed.relu(summed.exp(sx)), {0})));
    EXPECT_TRUE(passes::find_row_segments(ir::impl_of(summed)).segments.empty());
    auto ops = [&](const passes::RowSegment& seg) {
      std::vector<ir::Op> v;
      for (uint32_t i = seg.first; i <= seg.last; ++i)
        if (gi.nodes[i].op != ir::Op::Param && gi.nodes[i].op != ir::Op::Constant) v.push_back(gi.nodes[i].op);
      return v;
    };
    EXPECT_EQ(ops(s.segments[0]), (std::vector<ir::Op>{ir::Op::MatMul, ir::Op::Relu, ir::Op::Exp, ir::Op::ReduceMean}));
    EXPECT_TRUE(s.segments[0].reduces);
    EXPECT_EQ(ops(s.segments[1]), (std::vector<ir::Op>{ir::Op::Mul, ir::Op::Tanh}));
    EXPECT_FALSE(s.segments[1].reduces);
  }
  {  // a sum over rows of one value each is summed across a vector's lanes, not by rows: it ends
     // the stretch without joining it
    Graph g;
    Value x = g.input("x", {8, 16});
    g.output("y", g.sum(g.relu(g.matmul(x, g.param("a", Shape{16, 1}))), {0}));
    const ir::GraphImpl& gi = ir::impl_of(g);
    const passes::RowSegments s = passes::find_row_segments(gi);
    ASSERT_EQ(s.segments.size(), 1u);
    EXPECT_EQ(gi.nodes[s.segments[0].last].op, ir::Op::Relu);
    EXPECT_FALSE(s.segments[0].reduces);
  }
}

TEST(RowSegmentThreads, ThePlanKeepsASegmentsBuffersApart) {
  const HirModule enc = rt::make_encoder(32, wide());
  CompiledGraph c = compile(enc, 2);
  if (c.report().threads < 2) GTEST_SKIP() << "one thread on this build";
  // The compiled graph's IR, planned again with and without its segments.
  const ir::GraphImpl g = compiled_ir(enc);
  const passes::RowSegments rows = passes::find_row_segments(g);
  ASSERT_FALSE(rows.segments.empty());
  const passes::MemoryPlan plain = passes::plan_memory(g), split = passes::plan_memory(g, rows.segments);
  EXPECT_TRUE(passes::plan_is_valid(g, split));
  // Every two buffers that a segment touches are disjoint in the split plan; the plain plan reuses
  // some of them (else this test would prove nothing).
  int reused = 0;
  for (const passes::RowSegment& s : rows.segments) {
    std::vector<uint32_t> touched;
    for (uint32_t i = s.first; i <= s.last; ++i) {
      if (split.floats[split.root[i]] > 0) touched.push_back(split.root[i]);
      for (uint32_t src : g.nodes[i].in)
        if (split.floats[split.root[src]] > 0) touched.push_back(split.root[src]);
    }
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    for (size_t a = 0; a < touched.size(); ++a)
      for (size_t b = a + 1; b < touched.size(); ++b) {
        auto overlap = [&](const passes::MemoryPlan& p) {
          const uint32_t x = touched[a], y = touched[b];
          return p.offset[x] < p.offset[y] + p.floats[y] && p.offset[y] < p.offset[x] + p.floats[x];
        };
        EXPECT_FALSE(overlap(split)) << "nodes " << touched[a] << " and " << touched[b];
        reused += overlap(plain);
      }
  }
  EXPECT_GT(reused, 0);
}

// The row regions: what only segments write and read, each thread its own rows, leaves the arena;
// everything another kernel reads, and the graph's inputs and outputs, stays in it.
TEST(RowSegmentThreads, RegionsHoldWhatOnlySegmentsTouch) {
  const HirModule enc = rt::make_encoder(32, wide());
  CompiledGraph c = compile(enc, 2);
  if (c.report().threads < 2) GTEST_SKIP() << "one thread on this build";
  const ir::GraphImpl g = compiled_ir(enc);
  const passes::RowSegments rows = passes::find_row_segments(g);
  ASSERT_FALSE(rows.segments.empty());
  const passes::MemoryPlan shared = passes::plan_memory(g, rows.segments), regional = passes::plan_memory(g, rows);
  EXPECT_TRUE(passes::plan_is_valid(g, regional));
  std::vector<bool> in_segment(g.nodes.size(), false);
  for (const passes::RowSegment& s : rows.segments)
    for (uint32_t i = s.first; i <= s.last; ++i) in_segment[i] = true;
  std::vector<uint32_t> in_regions;
  for (uint32_t i = 0; i < g.nodes.size(); ++i)
    if (regional.root[i] == i && regional.regional(i)) in_regions.push_back(i);
  ASSERT_GE(in_regions.size(), 6u) << "each layer's norms, projections and residual sums";
  for (uint32_t r : in_regions) {
    EXPECT_TRUE(in_segment[r]) << "node " << r;
    EXPECT_NE(g.nodes[r].op, ir::Op::Input);
    for (const auto& out : g.outputs) EXPECT_NE(regional.root[out.second], r) << "an output in a region";
    for (uint32_t i = 0; i < g.nodes.size(); ++i)
      for (uint32_t src : g.nodes[i].in)
        if (regional.root[src] == r && g.nodes[i].op != ir::Op::Reshape)
          EXPECT_TRUE(in_segment[i]) << ir::op_name(g.nodes[i].op) << " (node " << i << ") reads regional node " << r;
  }
  // q, k and v (read by attention) stay in the arena.
  int attention_inputs = 0;
  for (const ir::Node& n : g.nodes)
    if (n.op == ir::Op::Attention)
      for (uint32_t src : n.in) attention_inputs += !regional.regional(src) && regional.floats[regional.root[src]] > 0;
  EXPECT_GT(attention_inputs, 0);
  // A region is one thread's, run in order: its buffers reuse bytes by plain liveness, which the
  // segments' rule (all of a segment's buffers apart) would not allow.
  int shared_bytes = 0;
  for (size_t a = 0; a < in_regions.size(); ++a)
    for (size_t b = a + 1; b < in_regions.size(); ++b) {
      const uint32_t x = in_regions[a], y = in_regions[b];
      shared_bytes += regional.offset[x] < regional.offset[y] + regional.floats[y] &&
                      regional.offset[y] < regional.offset[x] + regional.floats[x];
    }
  EXPECT_GT(shared_bytes, 0);
  EXPECT_GT(regional.region_floats, 0);
  EXPECT_LT(regional.arena_floats, shared.arena_floats);
  // The report counts the arena and one region a thread.
  EXPECT_EQ(c.report().arena_bytes, static_cast<size_t>(regional.arena_floats + 2 * regional.region_floats) * sizeof(float));
  // One thread: no regions.
  EXPECT_EQ(compile(enc, 1).report().arena_bytes, static_cast<size_t>(passes::plan_memory(g).arena_floats) * sizeof(float));
}

// A product whose B is computed (no rows) needs scratch for its packed B: each range of rows gets
// its own, so the segment still runs split, and computes what one thread does.
TEST(RowSegmentThreads, AProductThatNeedsScratchStillSplits) {
  Graph g;
  Value x = g.input("x", {64, 256});
  Value b = g.relu(g.param("w", {256, 256}));  // an activation without rows: B is not packed once
  g.output("y", g.exp(g.neg(g.abs(g.matmul(x, b)))));
  auto build = [&](int threads) {
    CompileOptions o;
    o.threads = threads;
    CompiledGraph c = Session(Device::Cpu).compile(g, o);
    c.set_param("w", rungs::testing::random_vector(256 * 256, 7, -0.0625f, 0.0625f));
    return c;
  };
  CompiledGraph one = build(1), two = build(2);
  if (two.report().threads < 2) GTEST_SKIP() << "one thread on this build";
  int split_products = 0;
  for (const KernelReport& k : two.report().kernels) split_products += k.op == "matmul" && k.row_segment >= 0;
  EXPECT_EQ(split_products, 1) << two.report().to_text();
  const std::vector<float> xs = rungs::testing::random_vector(64 * 256, 8);
  const std::vector<NamedInput> in = {{"x", xs}};
  const auto want = one.run(in);
  for (int round = 0; round < 3; ++round) EXPECT_EQ(two.run(in)[0], want[0]) << "round " << round;
}

TEST(RowSegmentThreads, SplitRunsMatchOneThreadAtEveryRowCount) {
  const int64_t E = 64;
  const HirModule enc = rt::make_encoder(E, wide());
  CompiledGraph one = compile(enc, 1), two = compile(enc, 2);
  ASSERT_TRUE(one.prepare_active_rows(E)) << one.active_rows_reason();
  ASSERT_TRUE(two.prepare_active_rows(E)) << two.active_rows_reason();
  // 64 rows: two ranges of 32; 37: 20 + 17; 9: 8 + 1; 5: too few to split (one range).
  for (int64_t r : {int64_t{64}, int64_t{37}, int64_t{9}, int64_t{5}}) {
    auto [ids, mask] = rt::encoder_inputs(r, r, 50, 4);
    const std::vector<NamedInput> in = {{"ids", ids}, {"mask", mask}};
    const auto want = one.run_rows(in, r);
    for (int round = 0; round < 3; ++round) {
      const auto got = two.run_rows(in, r);
      ASSERT_EQ(got.size(), want.size());
      // The same bits: every value is computed by one thread in a fixed order, the pooled sum too
      // (blocks of rows, added in order).
      for (size_t k = 0; k < got.size(); ++k) EXPECT_EQ(got[k], want[k]) << "rows " << r << ", output " << k;
    }
  }
  auto [ids, mask] = rt::encoder_inputs(50, E, 50, 5);  // the compiled rows, padded
  const std::vector<NamedInput> in = {{"ids", ids}, {"mask", mask}};
  const auto want = one.run(in), got = two.run(in);
  for (size_t k = 0; k < got.size(); ++k) EXPECT_EQ(got[k], want[k]) << "output " << k;
}

}  // namespace
