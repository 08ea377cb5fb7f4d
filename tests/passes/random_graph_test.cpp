// SPDX-License-Identifier: Apache-2.0
// Random graphs of elementwise ops (broadcasting, scalar constants, shared values, intermediate
// outputs), matmuls with bias/activation/residual tails and norms: every pass must keep the
// numbers of the unfused compile, whatever the pattern matchers decide.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "fusion_harness.hpp"

namespace {

using namespace rungs;
using namespace rungs::testing;

Graph random_graph(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  Graph g;
  const int64_t R = 1 + pick(4), C = 1 + pick(6);
  // Inputs first (all of [R, C], [C], [R, 1], [1, C]); then ops.
  std::vector<Value> vals{g.input("a", {R, C}), g.input("b", {C}), g.input("c", {R, 1}), g.input("d", {1, C}),
                          g.input("e", {R, C})};
  auto full = [&]() {  // a value of shape [R, C]
    std::vector<Value> f;
    for (Value v : vals)
      if (g.shape(v) == Shape{R, C}) f.push_back(v);
    return f[pick(f.size())];
  };
  int params = 0;
  const int steps = 6 + static_cast<int>(pick(14));
  for (int s = 0; s < steps; ++s) {
    Value x = vals[pick(vals.size())];
    switch (pick(7)) {
      case 0: {
        switch (pick(8)) {
          case 0: x = g.relu(x); break;
          case 1: x = g.tanh(x); break;
          case 2: x = g.sigmoid(x); break;
          case 3: x = g.neg(x); break;
          case 4: x = g.abs(x); break;
          case 5: x = g.gelu(x); break;
          case 6: x = g.silu(x); break;
          default: x = g.gelu_tanh(x); break;
        }
        break;
      }
      case 1:
      case 2: {
        Value y = pick(4) == 0 ? g.constant({static_cast<float>(pick(5)) * 0.25f - 0.5f}, {1}) : vals[pick(vals.size())];
        if (pick(2)) std::swap(x, y);
        switch (pick(5)) {
          case 0: x = g.add(x, y); break;
          case 1: x = g.sub(x, y); break;
          case 2: x = g.mul(x, y); break;
          case 3: x = g.maximum(x, y); break;
          default: x = g.minimum(x, y); break;
        }
        break;
      }
      case 3: {  // linear tail: matmul [R, C] x [C, C] (+ bias) (act) (+ residual)
        std::string p = "w" + std::to_string(params++);
        x = g.matmul(full(), g.param(p, {C, C}));
        if (pick(2)) x = g.add(x, g.param(p + ".b", {C}));
        if (pick(2)) x = g.relu(x);
        if (pick(2)) x = g.add(full(), x);
        break;
      }
      case 4: {
        std::string p = "n" + std::to_string(params++);
        Value in = pick(2) ? g.add(full(), full()) : full();
        x = pick(2) ? g.layer_norm(in, g.param(p + ".g", {C}), g.param(p + ".b", {C}))
                    : g.rms_norm(in, g.param(p + ".g", {C}));
        break;
      }
      case 5:
        x = g.softmax(full(), pick(2) ? -1 : 0);
        break;
      default:
        x = g.sum(full(), {static_cast<int>(pick(2))}, true);
        break;
    }
    vals.push_back(x);
    if (pick(5) == 0) g.output("o" + std::to_string(s), x);  // an intermediate read from outside
  }
  g.output("last", vals.back());
  return g;
}

TEST(PassRandomGraphs, FusedEqualsUnfused) {
  size_t fused_kernels = 0, plain_kernels = 0;
  std::map<std::string, size_t> kinds;
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Graph g = random_graph(seed);
    Device d = seed % 2 ? Device::Reference : Device::Cpu;
    FusionRuns runs = run_fused_and_plain(g, d, {}, seed);
    expect_same_outputs(runs);
    EXPECT_LE(runs.fused.kernels.size(), runs.plain.kernels.size()) << g.to_text();
    fused_kernels += runs.fused.kernels.size();
    plain_kernels += runs.plain.kernels.size();
    for (const char* op : {"fused_matmul", "fused_elementwise", "fused_add_norm"}) kinds[op] += count_kernels(runs.fused, op);
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << g.to_text();
      break;
    }
  }
  for (const auto& [op, n] : kinds) EXPECT_GT(n, 0u) << "no random graph produced a " << op;
  EXPECT_LT(fused_kernels * 10, plain_kernels * 9) << "fusion should remove a good share of the kernels";
}

}  // namespace
