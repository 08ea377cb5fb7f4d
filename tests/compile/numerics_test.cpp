// SPDX-License-Identifier: Apache-2.0
// Numerics at the graph level (docs/numerics.md): Device::Cpu equals Device::Reference within the
// documented tolerance on every ISA this machine has (forced in turn); NaN and Inf inputs flow
// through deterministically; masked and padded rows never produce NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "backends/cpu/isa.hpp"
#include "numerics.hpp"
#include "rungs/rungs.hpp"
#include "test_models.hpp"
#include "test_util.hpp"

namespace {

using namespace rungs;
using rungs::backend::cpu::Isa;
using rungs::testing::cpu_agrees;
using rungs::testing::random_vector;

struct ForcedIsa {
  explicit ForcedIsa(Isa isa) { backend::cpu::force_isa(isa); }
  ~ForcedIsa() { backend::cpu::reset_forced_isa(); }
};

// One graph with every op family: matmul + bias + gelu (fused epilogue), an elementwise chain,
// softmax, both norms, reductions, gather, slice/concat/transpose, masked causal attention.
Graph every_family() {
  Graph g;
  Value x = g.input("x", {2, 5, 12});
  Value ids = g.input("ids", {2, 5});
  Value mask = g.input("mask", {2, 5});
  Value h = g.gelu(g.add(g.matmul(x, g.param("w", {12, 12})), g.param("b", {12})));
  h = g.add(h, g.gather(g.param("table", {7, 12}), ids));
  h = g.layer_norm(h, g.param("gamma", {12}), g.param("beta", {12}));
  AttentionOptions opt;
  opt.heads = 3;
  opt.causal = true;
  opt.key_mask = mask;
  Value a = g.attention(h, h, h, opt);
  Value e = g.div(g.mul(g.sigmoid(a), g.tanh(h)), g.add(g.abs(a), g.constant({1.f}, {1})));
  Value r = g.rms_norm(g.concat({g.slice(e, 2, 0, 6), g.slice(h, 2, 6, 6)}, 2), g.param("g2", {12}));
  g.output("softmax", g.softmax(g.transpose(r, {0, 2, 1}), -1));
  g.output("sum", g.sum(r, {1}));
  g.output("max", g.max(r, {0, 2}, true));
  g.output("mean", g.mean(g.exp(g.tanh(r)), {2}));
  return g;
}

std::map<std::string, std::vector<float>> family_inputs() {
  std::vector<float> ids = {0, 1, 2, 3, 6, 5, 4, 7, -1, 2};  // 7 and -1 are outside the table: zero rows
  std::vector<float> mask = {1, 1, 0, 1, 1, 0, 0, 0, 0, 0};  // batch 1: every key dropped
  return {{"x", random_vector(120, 1, -2.f, 2.f)}, {"ids", ids}, {"mask", mask}};
}

ParamMap family_params(const Graph& g) {
  ParamMap p;
  uint32_t seed = 10;
  CompiledGraph c = Session(Device::Reference).compile(g);
  for (const auto& name : c.param_names())
    p[name] = random_vector(static_cast<size_t>(shape_numel(c.param_shape(name))), seed++, -0.5f, 0.5f);
  return p;
}

std::vector<std::vector<float>> run(const Graph& g, Device device, const ParamMap& params,
                                    const std::map<std::string, std::vector<float>>& inputs, bool fusion = true,
                                    std::string* isa = nullptr) {
  CompileOptions o;
  o.fusion = fusion;
  CompiledGraph c = Session(device).compile(g, o);
  if (isa) *isa = c.report().isa;
  for (const auto& [name, data] : params) c.set_param(name, data);
  std::vector<NamedInput> named;
  for (const auto& [name, data] : inputs) named.push_back({name, data});
  return c.run(named);
}

bool same_bits(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].size() != b[i].size() || std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(float)) != 0)
      return false;
  return true;
}

TEST(Numerics, CpuMatchesReferenceOnEveryIsaWithinTheDocumentedTolerance) {
  const Graph g = every_family();
  const ParamMap params = family_params(g);
  const auto inputs = family_inputs();
  const auto want = run(g, Device::Reference, params, inputs);
  ASSERT_EQ(want.size(), 4u);
  for (Isa isa : backend::cpu::available_isas()) {
    ForcedIsa forced(isa);
    for (bool fusion : {true, false}) {
      std::string used;
      const auto got = run(g, Device::Cpu, params, inputs, fusion, &used);
      EXPECT_EQ(used, backend::cpu::isa_name(isa));
      for (size_t i = 0; i < want.size(); ++i) {
        const rungs::testing::Agreement a = cpu_agrees(got[i], want[i]);
        EXPECT_TRUE(a.ok) << "isa " << used << ", fusion " << fusion << ", output " << i << ": " << a.where;
        EXPECT_LE(a.error, rungs::testing::kCpuTolerance);
      }
    }
  }
}

TEST(Numerics, NanAndInfInputsFlowThroughDeterministically) {
  const Graph g = every_family();
  const ParamMap params = family_params(g);
  auto inputs = family_inputs();
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  inputs["x"][0] = nan;   // batch 0, row 0
  inputs["x"][13] = inf;  // batch 0, row 1
  inputs["x"][70] = -inf;
  inputs["ids"][1] = nan;  // a NaN id gathers a row of zeros (docs/row-kernels.md)
  for (Device device : {Device::Reference, Device::Cpu}) {
    const auto first = run(g, device, params, inputs);
    const auto second = run(g, device, params, inputs);
    EXPECT_TRUE(same_bits(first, second)) << to_string(device) << ": two runs differ";
    // The NaN row of x poisons its own rows, not batch 1, which shares nothing with batch 0.
    const std::vector<float>& sum = first[1];  // [2, 12]: sum over the rows of each batch
    bool any_nan_batch0 = false;
    for (int i = 0; i < 12; ++i) any_nan_batch0 |= std::isnan(sum[i]);
    EXPECT_TRUE(any_nan_batch0) << to_string(device);
  }
  // Elementwise ops on Inf and NaN: the IEEE results, on both devices.
  Graph e;
  Value x = e.input("x", {4});
  e.output("y", e.add(e.mul(x, e.constant({2.f}, {1})), e.constant({1.f}, {1})));
  e.output("r", e.relu(x));
  for (Device device : {Device::Reference, Device::Cpu}) {
    const auto out = run(e, device, {}, {{"x", {nan, inf, -inf, 1.f}}});
    EXPECT_TRUE(std::isnan(out[0][0]));
    EXPECT_EQ(out[0][1], inf);
    EXPECT_EQ(out[0][2], -inf);
    EXPECT_EQ(out[0][3], 3.f);
    EXPECT_EQ(out[1][1], inf);
    EXPECT_EQ(out[1][2], 0.f);
  }
}

TEST(Numerics, AttentionWithEveryKeyMaskedGivesZerosOnEveryIsa) {
  Graph g;
  Value q = g.input("q", {2, 6, 8});
  Value k = g.input("k", {2, 9, 8});
  Value m = g.input("mask", {2, 9});
  AttentionOptions opt;
  opt.heads = 2;
  opt.key_mask = m;
  g.output("y", g.attention(q, k, k, opt));
  std::vector<float> mask(18, 0.f);
  mask[9 + 4] = 1.f;  // batch 1 keeps one key; batch 0 none
  const std::map<std::string, std::vector<float>> inputs = {
      {"q", random_vector(96, 3)}, {"k", random_vector(144, 4)}, {"mask", mask}};
  std::vector<Isa> isas = backend::cpu::available_isas();
  for (Isa isa : isas) {
    ForcedIsa forced(isa);
    for (Device device : {Device::Cpu, Device::Reference}) {
      const auto y = run(g, device, {}, inputs)[0];
      for (int i = 0; i < 48; ++i) ASSERT_EQ(y[i], 0.f) << "batch 0 has no key: zeros, not NaN";
      // Batch 1 sees one key: every query gets that key's value row.
      for (int s = 0; s < 6; ++s)
        for (int d = 0; d < 8; ++d) ASSERT_FLOAT_EQ(y[48 + s * 8 + d], inputs.at("k")[72 + 4 * 8 + d]);
    }
  }
}

TEST(Numerics, AnExplicitAttentionScaleOfZeroIsHonouredOnEveryIsa) {
  // Found by fuzz_api: the CPU kernel read scale 0 as "not given" and used 1/sqrt(head_dim).
  // With scale 0 every score is 0, so each query averages the values of the keys it sees.
  Graph g;
  Value x = g.input("x", {1, 4, 1});
  AttentionOptions opt;
  opt.causal = true;
  opt.scale = 0.f;
  g.output("y", g.attention(x, x, x, opt));
  const std::map<std::string, std::vector<float>> in = {{"x", {-4, 0, 1, 7}}};
  const std::vector<float> want = {-4, -2, -1, 1};
  for (Isa isa : backend::cpu::available_isas()) {
    ForcedIsa forced(isa);
    for (Device device : {Device::Cpu, Device::Reference}) EXPECT_EQ(run(g, device, {}, in)[0], want) << to_string(device);
  }
}

TEST(Numerics, PaddedRowsNeverProduceNan) {
  const rungs::testing::EncoderConfig cfg;
  for (bool active : {false, true}) {
    auto cache = BucketedCompileCache::power_of_two_ladder(Device::Cpu, 8, 32);
    cache.set_active_extent(active);
    auto build = [&](uint64_t upper) {
      HirModule m = rungs::testing::make_encoder(static_cast<int64_t>(upper), cfg);
      return std::pair<HirModule, ParamMap>(m, rungs::testing::random_params(m, 5));
    };
    cache.ensure_hir_with_params(11, build, {});
    for (size_t real : {0u, 1u, 11u, 16u}) {
      auto [ids, mask] = rungs::testing::encoder_inputs(static_cast<int64_t>(real), static_cast<int64_t>(real), cfg.vocab, 9);
      const CacheRunInput in[] = {{"ids", ids, 1}, {"mask", mask, 1}};
      // Unsliced outputs: padded token rows come back too, and must be finite.
      const auto run = cache.run_padded_mixed(16, real, build, in, {});
      ASSERT_TRUE(run);
      for (const auto& out : run->outputs)
        for (float v : out) ASSERT_TRUE(std::isfinite(v)) << "real " << real << ", active " << active;
      if (real == 0)  // nothing real: the pooled embedding is zero, not 0/0
        for (float v : run->outputs[1]) EXPECT_EQ(v, 0.f);
    }
  }
}

}  // namespace
