// SPDX-License-Identifier: Apache-2.0
// Attention kernel vs its scalar reference, on every ISA this machine has.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "backends/cpu/attention/attention.hpp"
#include "backends/cpu/rows/testing.hpp"

namespace rungs::backend::cpu {
namespace {

using namespace testing;

struct Case {
  int64_t batch = 1, sq = 8, sk = 8, heads = 1, dh = 8;
  bool causal = false;
  bool mask = false;
  std::optional<float> scale;
};

AttentionParams params_of(const Case& c) {
  return {.heads = static_cast<int>(c.heads), .causal = c.causal, .has_mask = c.mask, .scale = c.scale};
}

OneOp attention_op(const Case& c) {
  const int64_t e = c.heads * c.dh;
  std::vector<Shape> in{{c.batch, c.sq, e}, {c.batch, c.sk, e}, {c.batch, c.sk, e}};
  if (c.mask) in.push_back({c.batch, c.sk});
  OneOp o(ops::Op::Attention, {c.batch, c.sq, e}, in);
  o.params.attention = params_of(c);
  return o;
}

// Inputs at the run-time extents of `r` (which may be smaller than the compiled `c`). The mask keeps
// about two keys in three and drops every key of batch 1 (a fully masked batch).
std::vector<Tensor> inputs_for(const Case& r) {
  const int64_t e = r.heads * r.dh;
  std::vector<Tensor> t{make_tensor({r.batch, r.sq, e}, 1), make_tensor({r.batch, r.sk, e}, 2),
                        make_tensor({r.batch, r.sk, e}, 3)};
  if (r.mask) {
    Tensor m = make_tensor({r.batch, r.sk}, 4, 0.f, 1.f);
    for (int64_t b = 0; b < r.batch; ++b)
      for (int64_t j = 0; j < r.sk; ++j) {
        float& x = m.data[b * r.sk + j];
        x = b == 1 ? 0.f : (x < 0.33f ? 0.2f : 0.5f);  // 0.5 keeps: the threshold is inclusive
      }
    t.push_back(std::move(m));
  }
  return t;
}

std::vector<float> expected(const Case& c, const std::vector<Tensor>& t) {
  std::vector<TensorArg> args;
  for (const auto& x : t) args.push_back(x.arg());
  std::vector<float> want(t[0].numel());
  attention_reference(params_of(c), args, want.data());
  return want;
}

std::vector<float> actual(Isa isa, const Case& compiled, const std::vector<Tensor>& t, int threads = 1) {
  OneOp g = attention_op(compiled);
  auto k = make_attention_kernel(g.spec(threads), isa);
  if (!k) throw std::runtime_error("no attention kernel");
  std::vector<TensorArg> args;
  for (const auto& x : t) args.push_back(x.arg());
  return run(*k, args, t[0].arg().dims, threads);
}

std::string describe(Isa isa, const Case& c) {
  return std::string(isa_name(isa)) + " B" + std::to_string(c.batch) + " Sq" + std::to_string(c.sq) + " Sk" +
         std::to_string(c.sk) + " H" + std::to_string(c.heads) + " Dh" + std::to_string(c.dh) +
         (c.causal ? " causal" : "") + (c.mask ? " mask" : "");
}

// Default bounds: float32 sums of up to 256 products against a double reference drift by up to
// ~Sk * 2^-24 relative, ~1.5e-5 at Sk = 256.
void expect_matches(Isa isa, const Case& c, double rtol = 2e-5, double atol = 5e-6) {
  SCOPED_TRACE(describe(isa, c));
  auto t = inputs_for(c);
  const auto got = actual(isa, c, t);
  for (float x : got) ASSERT_TRUE(std::isfinite(x));
  EXPECT_LE(worst_ratio(got, expected(c, t), rtol, atol), 1.0);
}

TEST(AttentionKernel, SequenceLengthsAroundTheKeyTile) {
  ASSERT_FALSE(vector_isas().empty());
  for (Isa isa : vector_isas()) {
    // A pass over the head dim scores 4 vectors of keys (2 on AVX2 and in wasm, for 4 queries at a
    // time), a tile's last pass only those that hold keys (one to four); a tile holds 64 keys (one
    // to eight passes).
    for (int64_t tile : {2 * lanes(isa), 4 * lanes(isa), int64_t{64}})
      for (int64_t s : tile_sizes(tile))
        for (bool causal : {false, true}) expect_matches(isa, {1, s, s, 2, 16, causal});
  }
}

TEST(AttentionKernel, HeadDimsAroundTheBatchWidth) {
  for (Isa isa : vector_isas())
    for (int64_t dh : tile_sizes(lanes(isa))) expect_matches(isa, {2, 19, 19, 3, dh, true});
}

TEST(AttentionKernel, LadderExtents) {
  for (Isa isa : vector_isas())
    for (int64_t s : ladder_extents()) expect_matches(isa, {1, s, s, 4, 32, s % 32 == 0});
}

TEST(AttentionKernel, KeyMaskIncludingAFullyMaskedBatch) {
  for (Isa isa : vector_isas()) {
    for (bool causal : {false, true}) {
      Case c{3, 37, 37, 2, 16, causal, true};
      expect_matches(isa, c);
      auto t = inputs_for(c);
      const auto got = actual(isa, c, t);
      const int64_t e = c.heads * c.dh;
      for (int64_t i = c.sq * e; i < 2 * c.sq * e; ++i) ASSERT_EQ(got[i], 0.f) << "batch 1 is fully masked";
    }
  }
}

// Value heads of one to five vectors (the kernel holds up to four in registers, two on AVX2 and in
// wasm, and keeps more keys in flight when a head is narrow), key counts that leave a remainder,
// and Inf and NaN in the key and value rows of masked keys: those keys add nothing.
TEST(AttentionKernel, ValueHeadsOfEveryWidthIgnoreNonFiniteMaskedKeys) {
  for (Isa isa : vector_isas())
    for (int64_t dh : {lanes(isa), 2 * lanes(isa), 3 * lanes(isa), 4 * lanes(isa), 5 * lanes(isa) + 1})
      for (bool causal : {false, true}) {
        const Case c{3, 37, 37, 2, dh, causal, true};
        SCOPED_TRACE(describe(isa, c));
        auto t = inputs_for(c);
        const int64_t e = c.heads * c.dh;
        int64_t poisoned = 0;
        for (int64_t b = 0; b < c.batch; ++b)
          for (int64_t j = 0; j < c.sk; ++j)
            if (t[3].data[b * c.sk + j] < 0.5f)
              for (int64_t d = 0; d < e; ++d, ++poisoned)
                for (size_t x : {size_t{1}, size_t{2}})  // k and v
                  t[x].data[(b * c.sk + j) * e + d] =
                      (d + x) % 2 ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
        ASSERT_GT(poisoned, c.sk * e);  // batch 1 whole, and some keys of the others
        const auto got = actual(isa, c, t);
        for (float x : got) ASSERT_TRUE(std::isfinite(x));
        EXPECT_LE(worst_ratio(got, expected(c, t), 2e-5, 5e-6), 1.0);
      }
}

// Causal: a query is not touched by the value of a key it does not see, even an Inf or NaN (the
// kernel computes groups of queries together, and the diagonal tile has keys only some of them
// see). Key `bad`'s value row is non-finite: queries before it match the reference and are
// finite, the queries from it on are not finite.
TEST(AttentionKernel, CausalQueriesIgnoreNonFiniteValuesOfKeysTheyDoNotSee) {
  for (Isa isa : vector_isas())
    for (int64_t dh : {lanes(isa), 2 * lanes(isa), 4 * lanes(isa)})
      for (int64_t bad : {int64_t{1}, int64_t{6}, int64_t{21}, int64_t{66}}) {
        const Case c{1, 70, 70, 2, dh, true};
        SCOPED_TRACE(describe(isa, c) + " non-finite key " + std::to_string(bad));
        auto t = inputs_for(c);
        const int64_t e = c.heads * c.dh;
        for (int64_t d = 0; d < e; ++d)
          t[2].data[bad * e + d] =
              d % 2 ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
        const auto got = actual(isa, c, t);
        const auto want = expected(c, t);
        const std::vector<float> got_before(got.begin(), got.begin() + bad * e);
        const std::vector<float> want_before(want.begin(), want.begin() + bad * e);
        for (float x : got_before) ASSERT_TRUE(std::isfinite(x));
        EXPECT_LE(worst_ratio(got_before, want_before, 2e-5, 5e-6), 1.0);
        for (int64_t i = bad * e; i < c.sq * e; ++i) ASSERT_FALSE(std::isfinite(got[i])) << "element " << i;
      }
}

TEST(AttentionKernel, KeysAndQueriesOfDifferentLengths) {
  for (Isa isa : vector_isas()) {
    for (bool causal : {false, true}) {
      expect_matches(isa, {2, 5, 70, 2, 8, causal, true});   // Sk > Sq: queries see the prefix
      expect_matches(isa, {1, 70, 5, 2, 8, causal, false});  // Sk < Sq: early queries see no key
      expect_matches(isa, {1, 1, 200, 4, 32, causal, false});  // one decoding step
    }
  }
}

TEST(AttentionKernel, CausalQueriesBeforeEveryKeyGiveZeros) {
  for (Isa isa : vector_isas()) {
    Case c{1, 70, 5, 1, 8, true};
    auto got = actual(isa, c, inputs_for(c));
    // Query i sees keys j <= i - 65: queries 0..64 see nothing.
    for (int64_t i = 0; i < 65 * 8; ++i) ASSERT_EQ(got[i], 0.f);
    EXPECT_NE(got[65 * 8], 0.f);
  }
}

TEST(AttentionKernel, ExplicitScale) {
  // Scale 0.9 makes logits of ~+-50 here: float32 rounding of a logit that size moves exp() by
  // ~1e-5 relative (times |v| ~ 3 absolute), so this case is held to 1e-4 relative and 3e-5
  // absolute; a kernel ignoring the scale is off by O(1).
  for (Isa isa : vector_isas()) expect_matches(isa, {1, 33, 33, 2, 16, true, false, 0.9f}, 1e-4, 3e-5);
}

TEST(AttentionKernel, RuntimeExtentSmallerThanCompiled) {
  for (Isa isa : vector_isas()) {
    for (int64_t s : {1, 9, 100}) {
      SCOPED_TRACE(std::string(isa_name(isa)) + " s " + std::to_string(s));
      Case compiled{2, 128, 128, 4, 32, true, true};
      Case runtime = compiled;
      runtime.sq = runtime.sk = s;
      auto t = inputs_for(runtime);
      EXPECT_LE(worst_ratio(actual(isa, compiled, t), expected(runtime, t), 1e-5, 2e-6), 1.0);
    }
  }
}

// How many threads share an attention (RunContext::parts_for over its tasks and grain): 16
// queries over 4 heads of 24 stay on one thread (so do 8 such tasks); 32 and more queries split.
TEST(AttentionKernel, ShortSequencesStayOnOneThread) {
  RunContext ctx;
  ctx.threads = 2;
  const int64_t heads = 4, dh = 24;
  EXPECT_EQ(1, ctx.parts_for(heads, attention_task_grain(16, 16, dh)));
  EXPECT_EQ(2, ctx.parts_for(heads, attention_task_grain(32, 32, dh)));
  EXPECT_EQ(2, ctx.parts_for(heads, attention_task_grain(64, 64, dh)));
  EXPECT_EQ(2, ctx.parts_for(heads, attention_task_grain(256, 256, dh)));
  EXPECT_EQ(1, ctx.parts_for(2 * heads, attention_task_grain(16, 16, dh)));
}

// packed_qk: q, k and v as column ranges of one [B, S, 2 E + Ev] tensor (what fuse_qkv makes)
// give what the three tensors give on their own, in the kernel on one and two threads and in the
// reference; v narrower and wider than q and k.
TEST(AttentionKernel, PackedQkvReadsColumnRangesOfOneTensor) {
  constexpr int64_t B = 3, S = 37, H = 2, dh = 16;
  for (int64_t dv : {int64_t{8}, int64_t{16}, int64_t{24}}) {
    const int64_t e = H * dh, ev = H * dv, w = 2 * e + ev;
    Tensor q = make_tensor({B, S, e}, 1), k = make_tensor({B, S, e}, 2), v = make_tensor({B, S, ev}, 3);
    Tensor mask = make_tensor({B, S}, 4, 0.f, 1.f);
    Tensor packed = make_tensor({B, S, w}, 5);
    for (int64_t r = 0; r < B * S; ++r) {
      std::copy_n(q.data.data() + r * e, e, packed.data.data() + r * w);
      std::copy_n(k.data.data() + r * e, e, packed.data.data() + r * w + e);
      std::copy_n(v.data.data() + r * ev, ev, packed.data.data() + r * w + 2 * e);
    }
    AttentionParams separate{.heads = H, .causal = false, .has_mask = true, .scale = std::nullopt};
    AttentionParams in_place = separate;
    in_place.packed_qk = e;
    std::vector<float> want(static_cast<size_t>(B * S * ev)), ref(want.size());
    const std::vector<TensorArg> three{q.arg(), k.arg(), v.arg(), mask.arg()};
    const std::vector<TensorArg> one{packed.arg(), packed.arg(), packed.arg(), mask.arg()};
    attention_reference(separate, three, want.data());
    attention_reference(in_place, one, ref.data());
    EXPECT_EQ(ref, want) << "reference, v width " << dv;
    for (Isa isa : vector_isas())
      for (int threads : {1, 2}) {
        SCOPED_TRACE(std::string(isa_name(isa)) + " v width " + std::to_string(dv) + " threads " +
                     std::to_string(threads));
        OneOp g(ops::Op::Attention, {B, S, ev}, {{B, S, w}, {B, S, w}, {B, S, w}, {B, S}});
        g.params.attention = in_place;
        auto kernel = make_attention_kernel(g.spec(threads), isa);
        ASSERT_NE(kernel, nullptr);
        const auto got = run(*kernel, one, Dims::of({B, S, ev}), threads);
        EXPECT_LE(worst_ratio(got, want, 2e-5, 5e-6), 1.0);
      }
  }
}

TEST(AttentionKernel, ThreadsGiveTheSameBitsAsOneThread) {
  for (Isa isa : vector_isas()) {
    Case c{2, 256, 256, 4, 32, true, true};
    auto t = inputs_for(c);
    EXPECT_EQ(actual(isa, c, t, 1), actual(isa, c, t, 3));
  }
}

}  // namespace
}  // namespace rungs::backend::cpu
