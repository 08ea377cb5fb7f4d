// SPDX-License-Identifier: Apache-2.0
// Memory planning: the arena reuses buffers (smaller than the sum of all intermediates) and no two
// buffers that are live at once overlap.
#include <gtest/gtest.h>

#include "core/ir/graph_access.hpp"
#include "core/passes/memory_plan.hpp"
#include "test_models.hpp"

namespace {

using namespace rungs;

TEST(MemoryPlan, EncoderArenaReusesBuffers) {
  for (bool fusion : {false, true}) {
    CompileOptions opt;
    opt.fusion = fusion;
    CompiledGraph c = Session(Device::Reference).compile_hir(rungs::testing::make_encoder(32), opt);
    const CompileReport& r = c.report();
    EXPECT_GT(r.arena_bytes, 0u);
    EXPECT_LT(r.arena_bytes, r.intermediate_bytes) << "fusion=" << fusion;
    EXPECT_LT(r.arena_bytes * 2, r.intermediate_bytes) << "reuse should at least halve the encoder's memory";
  }
}

TEST(MemoryPlan, NoLiveBuffersOverlap) {
  Graph g = rungs::testing::make_encoder(19).lower();
  auto plan = passes::plan_memory(ir::impl_of(g));
  EXPECT_TRUE(passes::plan_is_valid(ir::impl_of(g), plan));
  // The checker itself catches a corrupted plan: put two simultaneously live buffers together.
  const auto& nodes = ir::impl_of(g).nodes;
  uint32_t a = 0, b = 0;
  for (uint32_t i = 0; i < nodes.size() && !b; ++i)
    if (plan.floats[i] > 0 && plan.root[i] == i) {
      if (!a) {
        a = i;
      } else if (plan.first_step[i] <= plan.last_step[a]) {
        b = i;
      }
    }
  ASSERT_TRUE(a && b);
  auto broken = plan;
  broken.offset[b] = broken.offset[a];
  EXPECT_FALSE(passes::plan_is_valid(ir::impl_of(g), broken));
}

TEST(MemoryPlan, ReshapeAliasesItsSource) {
  Graph g;
  auto x = g.input("x", {4, 6});
  auto r = g.reshape(g.relu(x), {6, 4});
  g.output("y", g.neg(r));
  auto plan = passes::plan_memory(ir::impl_of(g));
  EXPECT_EQ(plan.root[r.id], r.id - 1);
  EXPECT_EQ(plan.offset[r.id], plan.offset[r.id - 1]);
  EXPECT_TRUE(passes::plan_is_valid(ir::impl_of(g), plan));
  CompiledGraph c = Session(Device::Cpu).compile(g);
  std::vector<float> xv(24);
  for (int i = 0; i < 24; ++i) xv[i] = float(i % 5) - 2;
  NamedInput in{"x", xv};
  auto y = c.run({&in, 1})[0];
  for (int i = 0; i < 24; ++i) EXPECT_EQ(y[i], -std::max(xv[i], 0.f));
}

}  // namespace

namespace {

// An input declared after compute nodes is live from the start: it must not share bytes with a
// buffer that is still in use when it is placed.
TEST(MemoryPlan, LateInputDoesNotOverlapLiveBuffers) {
  using namespace rungs;
  Graph g;
  auto x = g.input("x", {2, 9});
  auto y = g.add(g.matmul(x, g.param("w", {9, 6})), g.param("b", {6}));
  auto r = g.input("r", {2, 6});
  g.output("y", g.add(y, r));
  EXPECT_TRUE(passes::plan_is_valid(ir::impl_of(g), passes::plan_memory(ir::impl_of(g))));
  CompileOptions opt;
  opt.fusion = false;
  CompiledGraph c = Session(Device::Reference).compile(g, opt);
  c.set_param("w", std::vector<float>(54, 1.f));
  c.set_param("b", std::vector<float>(6, 0.5f));
  std::vector<float> xv(18, 1.f), rv(12, 2.f);
  std::vector<NamedInput> in = {{"x", xv}, {"r", rv}};
  auto out = c.run(in);
  ASSERT_EQ(out[0].size(), 12u);
  for (float v : out[0]) EXPECT_EQ(v, 9.f + 0.5f + 2.f);
}

}  // namespace
