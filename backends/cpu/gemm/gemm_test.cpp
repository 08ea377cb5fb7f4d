// SPDX-License-Identifier: Apache-2.0
// Correctness of the GEMM kernel against the scalar reference, on every ISA this machine has.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/families.hpp"
#include "backends/cpu/gemm/gemm.hpp"
#include "backends/cpu/gemm/pack.hpp"
#include "backends/cpu/gemm/reference.hpp"
#include "backends/cpu/isa.hpp"
#include "backends/thread_pool.hpp"
#include "core/numeric/half.hpp"
#include "rungs/error.hpp"

namespace rungs::backend::cpu {
// GoogleTest prints a parameter with this (found by argument-dependent lookup).
void PrintTo(Isa isa, std::ostream* os) { *os << isa_name(isa); }
}  // namespace rungs::backend::cpu

namespace rungs::backend::cpu::gemm {
namespace {

constexpr size_t kSlack = kReadPastBytes / sizeof(float);
constexpr float kSentinel = 12345.f;

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string text(const Shape& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

std::vector<Isa> vector_isas() {
  std::vector<Isa> isas;
  for (Isa isa : available_isas())
    if (isa != Isa::Scalar) isas.push_back(isa);
  return isas;
}

std::vector<float> random_values(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

// A buffer as the executor hands it: logical values, then kReadPastBytes of slack.
struct Buffer {
  std::vector<float> storage;
  Dims dims;
  Buffer(std::vector<float> values, const Shape& shape) : storage(std::move(values)), dims(Dims::of(shape)) {
    storage.resize(storage.size() + kSlack, kSentinel);
  }
  const float* data() const { return storage.data(); }
  size_t size() const { return storage.size() - kSlack; }
};

Shape broadcast_batch(const Shape& a, const Shape& b) {
  const size_t ra = a.size() - 2, rb = b.size() - 2, r = std::max(ra, rb);
  Shape out(r);
  for (size_t j = 0; j < r; ++j) {
    const int64_t da = j + ra >= r ? a[j + ra - r] : 1;
    const int64_t db = j + rb >= r ? b[j + rb - r] : 1;
    out[j] = std::max(da, db);
  }
  return out;
}

struct Case {
  Shape a, b;
  bool b_param = true;
  bool bias = false;
  Activation act = Activation::None;
  bool residual = false;
  PrecisionPolicy policy = PrecisionPolicy::f32();
  uint32_t seed = 1;
  bool b_transposed = false;  // b (a [k, n] param) is stored transposed, [n, k]
};

struct Built {
  KernelParams params;
  Shape out;
  KernelParams spec(PrecisionPolicy policy, int threads) const {
    KernelParams p = params;
    p.policy = policy;
    p.threads = threads;
    return p;
  }
};

Built build(const Case& c) {
  Built g;
  const int64_t n = c.b.back();
  Shape out = broadcast_batch(c.a, c.b);
  if (c.b.size() == 2) out.assign(c.a.begin(), c.a.end() - 1);  // [..., M]
  else out.push_back(c.a[c.a.size() - 2]);
  out.push_back(n);
  KernelParams& p = g.params;
  const bool fused = c.bias || c.residual || c.act != Activation::None || c.b_transposed;
  p.op = fused ? ops::Op::FusedMatMul : ops::Op::MatMul;
  p.out = Dims::of(out);
  p.inputs.push_back({Dims::of(c.a), Source::Activation, nullptr});
  const Shape b_stored = c.b_transposed ? Shape{n, c.b[0]} : c.b;
  p.inputs.push_back({Dims::of(b_stored), c.b_param ? Source::Param : Source::Activation, nullptr});
  if (c.bias) p.inputs.push_back({Dims::of({n}), Source::Param, nullptr});
  if (c.residual) p.inputs.push_back({Dims::of(out), Source::Activation, nullptr});
  p.epilogue = ops::Epilogue{c.bias, c.act, c.residual, c.b_transposed};
  g.out = out;
  return g;
}

struct Result {
  std::vector<float> got;       // kernel output
  std::vector<float> expected;  // reference (B as the kernel stores it)
  std::vector<float> exact;     // reference with f32 B
  std::vector<float> scale;     // |a| @ |b| + |bias| + |residual|: the size rounding errors scale with
  bool slack_intact = true;
};

float round_to(float x, PrecisionPolicy p) {
  if (p.weights == PrecisionPolicy::Format::BF16) return numeric::bf16_to_f32(numeric::f32_to_bf16(x));
  if (p.weights == PrecisionPolicy::Format::F16) return numeric::f16_to_f32(numeric::f32_to_f16(x));
  return x;
}

// Runs case `c` on `isa` with the A rows given by `a_run` (a shorter leading dim models active
// extent) on `threads` threads.
Result run_case(const Case& c, Isa isa, int threads = 1, Shape a_run = {}) {
  Built g = build(c);
  if (a_run.empty()) a_run = c.a;
  std::unique_ptr<Kernel> kernel = make_gemm_kernel(g.spec(c.policy, threads), isa);
  EXPECT_NE(kernel, nullptr);
  if (!kernel) return {};

  Shape out = g.out;
  for (size_t j = 0; j + 2 <= a_run.size(); ++j) {  // runtime rows follow a_run
    const size_t oj = out.size() - a_run.size() + j;
    if (c.b.size() == 2 || j + 2 == a_run.size()) out[oj] = a_run[j];
  }
  const int64_t k = c.a.back(), n = c.b.back();
  Buffer a(random_values(numel(a_run), c.seed), a_run);
  Buffer b(random_values(numel(c.b), c.seed + 1), c.b_transposed ? Shape{n, k} : c.b);
  Buffer bias(random_values(n, c.seed + 2), {n});
  Buffer res(random_values(numel(out), c.seed + 3), out);
  if (c.b_param) kernel->set_weight(1, {b.data(), b.size()});

  std::vector<TensorArg> in{{a.data(), a.dims}, {c.b_param ? nullptr : b.data(), b.dims}};
  if (c.bias) in.push_back({bias.data(), bias.dims});
  if (c.residual) in.push_back({res.data(), res.dims});
  std::vector<float> scratch(kernel->scratch_floats() + kSlack);
  std::unique_ptr<ThreadPool> pool = threads > 1 ? std::make_unique<ThreadPool>(threads - 1) : nullptr;
  RunContext ctx{pool.get(), threads, scratch.data()};
  Buffer o(std::vector<float>(numel(out), std::nanf("")), out);
  kernel->run(ctx, in, o.storage.data(), o.dims);

  Result r;
  r.got.assign(o.storage.begin(), o.storage.begin() + o.size());
  for (size_t i = o.size(); i < o.storage.size(); ++i) r.slack_intact &= o.storage[i] == kSentinel;

  // Reference, batch by batch, with B as [..., k, n].
  std::vector<float> b_logical(b.storage.begin(), b.storage.begin() + b.size());
  if (c.b_transposed)
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < n; ++j) b_logical[i * n + j] = b.data()[j * k + i];
  std::vector<float> b_stored = b_logical;
  if (c.b_param)
    for (float& x : b_stored) x = round_to(x, c.policy);
  const Dims od = Dims::of(out);
  const int64_t m = c.b.size() == 2 ? od.rows() : a_run[a_run.size() - 2];
  const int64_t batches = numel(out) / (m * n);
  r.expected.resize(r.got.size());
  r.exact.resize(r.got.size());
  r.scale.resize(r.got.size());
  auto index = [](const Shape& s, const Shape& o, int64_t t) {  // broadcast batch index of s
    const size_t rs = s.size() - 2, ro = o.size() - 2;
    int64_t idx = 0, stride = 1;
    for (size_t j = ro; j-- > 0;) {
      const int64_t i = t % o[j];
      t /= o[j];
      if (j + rs >= ro) {
        const int64_t d = s[j + rs - ro];
        if (d != 1) idx += i * stride;
        stride *= d;
      }
    }
    return idx;
  };
  for (int64_t t = 0; t < batches; ++t) {
    const int64_t ai = c.b.size() == 2 ? 0 : index(a_run, out, t);
    const int64_t bi = c.b.size() == 2 ? 0 : index(c.b, out, t);
    const float* ap = a.data() + ai * m * k;
    const float* res_p = c.residual ? res.data() + t * m * n : nullptr;
    const float* bias_p = c.bias ? bias.data() : nullptr;
    reference_gemm(ap, b_stored.data() + bi * k * n, r.expected.data() + t * m * n, m, k, n, bias_p, c.act, res_p);
    reference_gemm(ap, b_logical.data() + bi * k * n, r.exact.data() + t * m * n, m, k, n, bias_p, c.act, res_p);
    std::vector<float> abs_a(ap, ap + m * k), abs_b(b_logical.data() + bi * k * n, b_logical.data() + (bi + 1) * k * n);
    for (float& x : abs_a) x = std::fabs(x);
    for (float& x : abs_b) x = std::fabs(x);
    std::vector<float> abs_bias(n);
    for (int64_t j = 0; j < n; ++j) abs_bias[j] = c.bias ? std::fabs(bias.data()[j]) : 0.f;
    reference_gemm(abs_a.data(), abs_b.data(), r.scale.data() + t * m * n, m, k, n, abs_bias.data());
    if (res_p)
      for (int64_t i = 0; i < m * n; ++i) r.scale[t * m * n + i] += std::fabs(res_p[i]);
  }
  return r;
}

// got vs want within rel * scale + abs per element; reports the first failures.
::testing::AssertionResult close(const std::vector<float>& got, const std::vector<float>& want,
                                 const std::vector<float>& scale, double rel, double abs) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "size " << got.size() << " vs " << want.size();
  int bad = 0;
  std::string msg;
  for (size_t i = 0; i < got.size(); ++i) {
    const double tol = rel * scale[i] + abs;
    if (!(std::fabs(double(got[i]) - want[i]) <= tol)) {
      if (++bad <= 5) msg += " [" + std::to_string(i) + "] " + std::to_string(got[i]) + " vs " + std::to_string(want[i]);
    }
  }
  if (bad) return ::testing::AssertionFailure() << bad << " of " << got.size() << " differ:" << msg;
  return ::testing::AssertionSuccess();
}

constexpr double kF32Rel = 2e-6, kF32Abs = 1e-5;

void expect_matches(const Case& c, Isa isa, int threads = 1, Shape a_run = {}) {
  SCOPED_TRACE(std::string(isa_name(isa)) + " a=" + text(c.a) + " b=" + text(c.b));
  Result r = run_case(c, isa, threads, a_run);
  EXPECT_TRUE(close(r.got, r.expected, r.scale, kF32Rel, kF32Abs));
  EXPECT_TRUE(r.slack_intact) << "wrote past the end of the output";
}

TEST(GemmBlocking, PanelInL1WhenItHoldsEnoughK) {
  const CacheSizes xeon{48 * 1024, 2048 * 1024, "test"};
  const CacheSizes epyc{32 * 1024, 512 * 1024, "test"};
#if defined(__EMSCRIPTEN__)
  EXPECT_EQ(panel_block_bytes(xeon, 16), 96 * 1024);  // wasm streams whatever the tile
  EXPECT_EQ(panel_block_bytes(epyc, 8), 64 * 1024);
#else
  // 16 and 8 columns: three quarters of L1 holds >= kMinL1PanelK rows, the panel stays there.
  EXPECT_EQ(panel_block_bytes(xeon, 16), 36 * 1024);
  EXPECT_EQ(panel_block_bytes(xeon, 8), 36 * 1024);
  EXPECT_EQ(panel_block_bytes(epyc, 16), 24 * 1024);
#endif
  // 32 columns (avx512's tile): 288 rows in L1 is too few, the panel streams from L2 (two L1s, at
  // most L2 / 8); 64 likewise.
  EXPECT_EQ(panel_block_bytes(xeon, 32), 96 * 1024);
  EXPECT_EQ(panel_block_bytes(xeon, 64), 96 * 1024);
  EXPECT_EQ(panel_block_bytes(epyc, 64), 64 * 1024);
  EXPECT_EQ(panel_block_bytes({48 * 1024, 256 * 1024, "test"}, 64), 32 * 1024);
}

TEST(GemmBlocking, ABlockLeavesRoomForTheCGroupOrAStreamedPanel) {
  const CacheSizes xeon{48 * 1024, 2048 * 1024, "test"};
  EXPECT_EQ(a_block_bytes(xeon, 1, false), 1536 * 1024);
  EXPECT_EQ(a_block_bytes(xeon, 2, false), 512 * 1024);
#if defined(__EMSCRIPTEN__)
  EXPECT_EQ(a_block_bytes(xeon, 1, true), 1536 * 1024);  // wasm keeps three quarters
#else
  // A panel streamed from L2 passes there beside A: a quarter even with one K block.
  EXPECT_EQ(a_block_bytes(xeon, 1, true), 512 * 1024);
  const IsaGemm avx2_like{"test", 6, 16, {}};
  // K = 512: one block of 512 (the panel's 36 KB hold 576 k rows); A gets 1.5 MB, 768 rows.
  const Blocking one = choose_blocking(512, avx2_like, Format::F32, xeon);
  EXPECT_EQ(one.kc, 512);
  EXPECT_EQ(one.mc, 768);
  // K = 768: two blocks of 384; A gets 512 KB, 341 rows rounded down to the tile's 6: 336.
  const Blocking two = choose_blocking(768, avx2_like, Format::F32, xeon);
  EXPECT_EQ(two.kc, 384);
  EXPECT_EQ(two.mc, 336);
  const IsaGemm avx512_like{"test", 12, 32, {}};
  // K = 768: one block of 768 (96 KB streamed from L2); A gets 512 KB, 170 rows rounded to 168.
  const Blocking streamed = choose_blocking(768, avx512_like, Format::F32, xeon);
  EXPECT_EQ(streamed.kc, 768);
  EXPECT_EQ(streamed.mc, 168);
#endif
}

class GemmIsa : public ::testing::TestWithParam<Isa> {};

std::string isa_param_name(const ::testing::TestParamInfo<Isa>& info) {
  std::string s(isa_name(info.param));
  for (char& ch : s) ch = ch == '.' ? '_' : ch;
  return s;
}

INSTANTIATE_TEST_SUITE_P(Isas, GemmIsa, ::testing::ValuesIn(vector_isas()), isa_param_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GemmIsa);

TEST_P(GemmIsa, SizesAroundTheTile) {
  const IsaGemm& g = *isa_gemm(GetParam());
  const int64_t kc = choose_blocking(4096, g, Format::F32).kc;  // the K block for long K
  auto around = [](int64_t t) { return std::vector<int64_t>{t - 1, t, t + 1, 2 * t + 3}; };
  for (int64_t m : around(g.mr))
    for (int64_t n : around(g.nr))
      for (int64_t k : {int64_t{1}, int64_t{2}, int64_t{7}, kc - 1, kc, kc + 1, 2 * kc + 3})
        expect_matches({.a = {m, k}, .b = {k, n}, .seed = static_cast<uint32_t>(m * 7 + n * 3 + k)}, GetParam());
}

TEST_P(GemmIsa, SmallMAndLadderExtents) {
  std::vector<int64_t> ms;
  for (int64_t m = 1; m <= 32; ++m) ms.push_back(m);
  for (int64_t m : {64, 128, 256}) ms.push_back(m);
  for (int64_t m : ms) expect_matches({.a = {m, 96}, .b = {96, 80}, .bias = true, .seed = uint32_t(m)}, GetParam());
}

TEST_P(GemmIsa, LongKSpansSeveralKBlocks) {
  const IsaGemm& g = *isa_gemm(GetParam());
  const int64_t k = 3 * choose_blocking(4096, g, Format::F32).kc + 5;
  ASSERT_GT(choose_blocking(k, g, Format::F32).kc, 0);
  ASSERT_GT(k / choose_blocking(k, g, Format::F32).kc, 1) << "the case must cross K blocks";
  for (int64_t m : {1, 6, 13})
    expect_matches({.a = {m, k}, .b = {k, 2 * g.nr + 5}, .bias = true, .act = Activation::Gelu, .residual = true},
                   GetParam());
}

TEST_P(GemmIsa, EveryEpilogue) {
  for (Activation act : {Activation::None, Activation::Relu, Activation::Gelu, Activation::GeluTanh,
                         Activation::Silu, Activation::Tanh, Activation::Sigmoid}) {
    for (bool bias : {false, true})
      for (bool residual : {false, true}) {
        SCOPED_TRACE("activation " + std::to_string(static_cast<int>(act)));
        // Values of |x| up to ~5 reach the activations' tails.
        expect_matches({.a = {9, 40}, .b = {40, 70}, .bias = bias, .act = act, .residual = residual}, GetParam());
      }
  }
}

TEST_P(GemmIsa, LeadingDimsOfAAreRows) {
  expect_matches({.a = {2, 3, 5, 24}, .b = {24, 33}, .bias = true, .act = Activation::Relu, .residual = true},
                 GetParam());
}

TEST_P(GemmIsa, BatchedActivations) {
  // attention-style: both operands are activations, packed into scratch per run
  expect_matches({.a = {2, 3, 17, 32}, .b = {2, 3, 32, 19}, .b_param = false}, GetParam());
  // broadcast batch dims on both sides
  expect_matches({.a = {3, 10, 16}, .b = {2, 1, 16, 24}, .b_param = false}, GetParam());
  expect_matches({.a = {4, 1, 7, 16}, .b = {3, 16, 40}, .b_param = false, .bias = true, .act = Activation::Silu},
                 GetParam());
  // 2-D activation B
  expect_matches({.a = {12, 20}, .b = {20, 30}, .b_param = false}, GetParam());
}

TEST_P(GemmIsa, BatchedWeights) {
  expect_matches({.a = {3, 9, 16}, .b = {3, 16, 20}}, GetParam());
  expect_matches({.a = {2, 9, 16}, .b = {1, 16, 20}, .bias = true}, GetParam());
}

TEST_P(GemmIsa, RuntimeRowsShorterThanCompiled) {
  // Active extent: compiled for 64 rows, run with fewer; only those rows are written.
  for (int64_t rows : {1, 5, 17, 63}) {
    expect_matches({.a = {64, 48}, .b = {48, 72}, .bias = true, .act = Activation::Gelu, .residual = true},
                   GetParam(), 1, {rows, 48});
    expect_matches({.a = {2, 32, 48}, .b = {48, 72}, .bias = true}, GetParam(), 1, {2, rows % 32 + 1, 48});
    expect_matches({.a = {2, 32, 16}, .b = {2, 16, 24}, .b_param = false}, GetParam(), 1, {2, rows % 32 + 1, 16});
  }
}

TEST_P(GemmIsa, ThreadsGiveTheSameBitsAsOneThread) {
  const std::vector<Case> cases = {
      {.a = {256, 192}, .b = {192, 300}, .bias = true, .act = Activation::Gelu, .residual = true},
      {.a = {3, 512}, .b = {512, 1000}},  // small M: split over panels
      {.a = {700, 64}, .b = {64, 40}},    // one panel: split over rows
      {.a = {4, 2, 64, 32}, .b = {4, 2, 32, 64}, .b_param = false},
      {.a = {96, 160}, .b = {160, 130}, .policy = PrecisionPolicy::bf16_weights()},
      {.a = {512, 256}, .b = {256, 256}},  // 67 MFLOP: tasks claimed one at a time (balance_tasks)
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(text(c.a) + " x " + text(c.b));
    const Result one = run_case(c, GetParam(), 1);
    for (int threads : {2, 3, 4}) {
      const Result many = run_case(c, GetParam(), threads);
      ASSERT_EQ(one.got.size(), many.got.size());
      EXPECT_EQ(0, std::memcmp(one.got.data(), many.got.data(), one.got.size() * sizeof(float)))
          << threads << " threads differ from one";
      EXPECT_TRUE(close(many.got, many.expected, many.scale, kF32Rel, kF32Abs));
    }
  }
}

// How many threads a product gets (product_threads): about 10 us of one thread's work each. The
// encoder's 16-row projections (16 x 128 x 128) split in wasm, where they take 13 us on one
// thread, and stay whole natively, where they take 2-3; a 1-row product never splits.
TEST(Gemm, ProductsGetAThreadPerTenMicrosecondsOfWork) {
  const int64_t projection = 2 * 16 * 128 * 128, row = 2 * 1 * 128 * 128, ffn = 2 * 256 * 128 * 512;
#if defined(__EMSCRIPTEN__)
  EXPECT_EQ(2, product_threads(projection, 2));
#else
  EXPECT_EQ(1, product_threads(projection, 2));
#endif
  EXPECT_EQ(1, product_threads(row, 8));
  EXPECT_EQ(8, product_threads(ffn, 8));
  EXPECT_EQ(1, product_threads(ffn, 1));
  EXPECT_EQ(1, product_threads(0, 4));
}

// The task split (split_tasks): the larger of rows and panels is cut, into a task count the
// threads share evenly; enough tasks already, or one thread, leave the blocking's split alone.
TEST(Gemm, ThreadsSplitTheLargerSideIntoEvenTasks) {
  struct Want {
    int64_t batches, m, panels, threads, mc, mr;
    TaskSplit split;
  };
  const Want cases[] = {
      {1, 256, 2, 2, 256, 6, {132, 2}},     // encoder GEMM, N = 128 (2 panels): rows, 132 + 124
      {1, 256, 12, 2, 256, 6, {132, 12}},   // 43 row tiles against 12 panels: rows
      {1, 16, 12, 2, 16, 6, {16, 6}},       // 3 row tiles against 12 panels: panels, 6 + 6
      {1, 3, 16, 4, 3, 6, {3, 4}},          // one row tile: 4 chunks of 4 panels
      {3, 64, 2, 2, 64, 6, {36, 2}},        // 3 batches on 2 threads: 2 row blocks each, 6 tasks
      {4, 64, 2, 2, 64, 6, {64, 2}},        // 4 batches on 2 threads: even already
      {1, 512, 12, 2, 120, 6, {90, 12}},    // 5 row blocks of 120 on 2 threads: 6 of 90
      {1, 2048, 12, 2, 120, 6, {114, 12}},  // 18 row blocks: enough, evened out (not 17 x 120 + 8)
      {1, 512, 48, 2, 510, 6, {258, 48}},   // avx2 at K = 768: 510 + 2 rows would leave a thread idle
      {1, 512, 48, 2, 384, 6, {258, 48}},   // avx2 at K = 1024: 384 + 128 rows, likewise
      {1, 256, 2, 1, 256, 6, {256, 2}},     // one thread
      {1, 16, 2, 4, 16, 6, {12, 1}},        // 3 row tiles, 2 panels, 4 threads: both, 2 x 2 tasks
  };
  for (const Want& w : cases) {
    const TaskSplit s = split_tasks(w.batches, w.m, w.panels, w.threads, w.mc, w.mr);
    SCOPED_TRACE(::testing::Message() << w.batches << " x m " << w.m << ", " << w.panels << " panels, "
                                      << w.threads << " threads, mc " << w.mc);
    EXPECT_EQ(s.mc, w.split.mc);
    EXPECT_EQ(s.pchunk, w.split.pchunk);
  }
  // Every split covers the rows and panels in tasks the threads share evenly, whenever the
  // problem has tiles enough for that.
  for (int64_t batches : {1, 2, 3, 5})
    for (int64_t m : {1, 5, 6, 7, 16, 64, 100, 256, 700})
      for (int64_t panels : {1, 2, 3, 12})
        for (int64_t threads : {2, 3, 4}) {
          const int64_t mc = std::min<int64_t>(m, 120);
          const TaskSplit s = split_tasks(batches, m, panels, threads, mc, 6);
          SCOPED_TRACE(::testing::Message() << batches << " x m " << m << ", " << panels << " panels, "
                                            << threads << " threads");
          ASSERT_GE(s.mc, 1);
          ASSERT_LE(s.mc, mc);
          ASSERT_TRUE(s.mc % 6 == 0 || s.mc == m);
          ASSERT_GE(s.pchunk, 1);
          ASSERT_LE(s.pchunk, panels);
          const int64_t tasks = batches * ((m + s.mc - 1) / s.mc) * ((panels + s.pchunk - 1) / s.pchunk);
          const int64_t tiles = batches * ((m + 5) / 6) * panels;
          if (tiles >= 4 * threads * threads) EXPECT_TRUE(tasks % threads == 0 || tasks >= 4 * threads) << tasks;
          // Row blocks of even size: no block has more row tiles than the block count needs.
          const int64_t blocks = (m + s.mc - 1) / s.mc;
          if (blocks > 1) EXPECT_EQ(s.mc / 6, ((m + 5) / 6 + blocks - 1) / blocks) << "row blocks of " << s.mc;
          EXPECT_GE(tasks, std::min(threads, tiles)) << "fewer tasks than threads though tiles were left";
        }
}

// balance_tasks: a product of kBalanceFlops per task or more gets kBalanceTasks tasks per thread
// (its panels cut, then its row blocks in whole row tiles), so that a thread on a slowed core can take fewer; a
// smaller one, or one thread, keeps split_tasks' split.
TEST(Gemm, BigProductsGetTasksEnoughForCoresOfUnequalSpeed) {
  auto tasks = [](const TaskSplit& s, int64_t batches, int64_t m, int64_t panels) {
    return batches * ((m + s.mc - 1) / s.mc) * ((panels + s.pchunk - 1) / s.pchunk);
  };
  struct Case {
    int64_t batches, m, k, n, threads, mc, mr, nr;
  };
  const Case cases[] = {
      {1, 512, 512, 512, 2, 512, 4, 8},    // wasm 512^3: 4 tasks from split_tasks, 8 here
      {1, 256, 256, 256, 2, 256, 6, 64},   // avx512 256^3 (33 MFLOP): 8
      {1, 512, 768, 3072, 4, 384, 6, 16},  // avx2, 4 threads: 16
      {3, 128, 256, 256, 2, 128, 6, 32},   // batches: rows cut within each
      {1, 64, 128, 128, 2, 64, 6, 16},     // 2 MFLOP: split_tasks' 2 tasks stay
      {1, 512, 512, 512, 1, 512, 4, 8},    // one thread: one task
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << c.batches << " x " << c.m << " x " << c.k << " x " << c.n << ", "
                                      << c.threads << " threads");
    const int64_t panels = (c.n + c.nr - 1) / c.nr, flops = 2 * c.batches * c.m * c.k * c.n;
    const TaskSplit even = split_tasks(c.batches, c.m, panels, c.threads, c.mc, c.mr);
    const TaskSplit s = balance_tasks(even, c.batches, c.m, panels, c.threads, flops, c.mr);
    EXPECT_LE(s.pchunk, even.pchunk);
    EXPECT_LE(s.mc, even.mc);
    if (s.mc < even.mc) EXPECT_EQ(s.pchunk, 1) << "rows cut while panels were left to cut";
    EXPECT_TRUE(s.mc % c.mr == 0 || s.mc == c.m) << s.mc;
    const int64_t want = std::min(kBalanceTasks * c.threads, flops / kBalanceFlops);
    if (c.threads == 1 || tasks(even, c.batches, c.m, panels) >= want) {
      EXPECT_EQ(s.mc, even.mc) << "enough tasks already: the split stays";
    } else {
      EXPECT_GE(tasks(s, c.batches, c.m, panels), want);
      EXPECT_GE(flops / tasks(s, c.batches, c.m, panels), kBalanceFlops / 2) << "tasks too small to hand over";
    }
  }
  EXPECT_EQ(8, tasks(balance_tasks(split_tasks(1, 512, 64, 2, 512, 4), 1, 512, 64, 2, 2 * 512 * 512 * 512, 4), 1, 512, 64));
}

// A [n, k] param read transposed (ONNX Gemm transB): packed from its transpose, in every weight
// format (bf16 and f16 pack two k values a word, so odd K checks the pair straddling the end).
TEST_P(GemmIsa, TransposedWeightsInEveryFormat) {
  const IsaGemm& g = *isa_gemm(GetParam());
  const PrecisionPolicy policies[] = {PrecisionPolicy::f32(), PrecisionPolicy::bf16_weights(),
                                      PrecisionPolicy::f16_weights()};
  for (const PrecisionPolicy& policy : policies)
    for (int64_t n : {int64_t{1}, int64_t{g.nr} - 1, int64_t{g.nr} + 3})
      for (int64_t k : {int64_t{1}, int64_t{7}, int64_t{64}, int64_t{301}}) {
        SCOPED_TRACE(policy.name());
        Case c{.a = {int64_t{g.mr} + 2, k}, .b = {k, n}, .bias = true, .act = Activation::Tanh, .policy = policy, .seed = static_cast<uint32_t>(n * 5 + k), .b_transposed = true};
        const Result r = run_case(c, GetParam());
        // Against the reference fed the same rounded weights, read untransposed: as tight as f32.
        EXPECT_TRUE(close(r.got, r.expected, r.scale, kF32Rel, kF32Abs)) << "n " << n << " k " << k;
        EXPECT_TRUE(r.slack_intact);
      }
}

TEST_P(GemmIsa, HalfWeightsDecodeExactlyAndStayWithinTheirPrecision) {
  struct Fmt {
    PrecisionPolicy policy;
    double rel;  // the format's relative rounding (half an ulp)
  };
  for (Fmt f : {Fmt{PrecisionPolicy::bf16_weights(), 1.0 / 256}, Fmt{PrecisionPolicy::f16_weights(), 1.0 / 2048}}) {
    SCOPED_TRACE(f.policy.weights == PrecisionPolicy::Format::BF16 ? "bf16" : "f16");
    for (int64_t k : {1, 2, 33, 64, 301, 1029}) {  // odd K: the pad half of the last word is unused
      for (int64_t m : {1, 2, 7}) {
        Case c{.a = {m, k}, .b = {k, 75}, .bias = true, .act = Activation::GeluTanh, .policy = f.policy};
        const Result r = run_case(c, GetParam());
        // Against the reference fed the same rounded weights: as tight as f32.
        EXPECT_TRUE(close(r.got, r.expected, r.scale, kF32Rel, kF32Abs)) << "k=" << k << " m=" << m;
        // Against exact f32 weights: within the format's rounding (activation slope <= 1.13).
        EXPECT_TRUE(close(r.got, r.exact, r.scale, 1.2 * f.rel, kF32Abs)) << "k=" << k << " m=" << m;
      }
    }
  }
}

TEST_P(GemmIsa, HalfWeightsKeepInfAndSubnormals) {
  // f16 decode handles exponent 0 and 31: multiply by a one-hot A row to read single weights.
  Built g = build({.a = {1, 4}, .b = {4, 16}, .policy = PrecisionPolicy::f16_weights()});
  std::unique_ptr<Kernel> kernel = make_gemm_kernel(g.spec(PrecisionPolicy::f16_weights(), 1), GetParam());
  std::vector<float> b(64, 0.f);
  b[0] = 70000.f;        // overflows f16 -> inf
  b[1] = -3e-6f;         // f16 subnormal
  b[2] = 65504.f;        // largest f16
  b[3] = 1e-9f;          // underflows to zero
  kernel->set_weight(1, b);
  std::vector<float> a(4 + kSlack, 0.f);
  a[0] = 1.f;
  std::vector<float> out(16 + kSlack);
  TensorArg in[2] = {{a.data(), Dims::of({1, 4})}, {nullptr, Dims::of({4, 16})}};
  kernel->run(RunContext{}, in, out.data(), Dims::of({1, 16}));
  EXPECT_TRUE(std::isinf(out[0]) && out[0] > 0);
  EXPECT_EQ(out[1], numeric::f16_to_f32(numeric::f32_to_f16(-3e-6f)));
  EXPECT_NE(out[1], 0.f);
  EXPECT_EQ(out[2], 65504.f);
  EXPECT_EQ(out[3], 0.f);
}

// Epilogue::b_parts: three weights side by side (the one product core/passes/fuse_qkv.cpp makes of
// a layer's q, k and v projections) against the reference of each part, on every ISA, plain and
// transposed, on one and two threads. The widths are not multiples of any panel width, so each
// part ends in a partial panel; at 6 rows the two threads split the panels, and the chunks cross
// the parts' boundaries.
TEST(Gemm, WeightsInPartsComputeOneProductEach) {
  const int64_t widths[3] = {40, 24, 57};
  const int64_t n = 40 + 24 + 57;
  struct Shape2 {
    int64_t m, k;
  };
  for (Isa isa : vector_isas())
    for (Shape2 mk : {Shape2{6, 2048}, Shape2{70, 256}})
      for (bool transposed : {false, true})
        for (int threads : {1, 2}) {
          SCOPED_TRACE(std::string(isa_name(isa)) + " m " + std::to_string(mk.m) + (transposed ? " transposed" : "") +
                       " threads " + std::to_string(threads));
          const int64_t m = mk.m, k = mk.k;
          KernelParams p;
          p.op = ops::Op::FusedMatMul;
          p.threads = threads;
          p.out = Dims::of({m, n});
          p.inputs.push_back({Dims::of({m, k}), Source::Activation, nullptr});
          for (int64_t w : widths)
            p.inputs.push_back({Dims::of(transposed ? Shape{w, k} : Shape{k, w}), Source::Param, nullptr});
          for (int64_t w : widths) p.inputs.push_back({Dims::of({w}), Source::Activation, nullptr});
          p.epilogue = ops::Epilogue{true, Activation::Relu, false, transposed, 3};
          std::unique_ptr<Kernel> kernel = make_gemm_kernel(p, isa);
          ASSERT_NE(kernel, nullptr);
          EXPECT_NE(kernel->describe().find("+parts3+bias+relu"), std::string::npos) << kernel->describe();
          EXPECT_FALSE(kernel->owns_weight(0));
          EXPECT_FALSE(kernel->owns_weight(4)) << "a bias is an input, not a weight";

          Buffer a(random_values(m * k, 11), {m, k});
          std::vector<Buffer> b, bias;
          for (int i = 0; i < 3; ++i) {
            b.emplace_back(random_values(k * widths[i], 20 + i), transposed ? Shape{widths[i], k} : Shape{k, widths[i]});
            bias.emplace_back(random_values(widths[i], 30 + i), Shape{widths[i]});
            ASSERT_TRUE(kernel->owns_weight(1 + i));
            kernel->set_weight(1 + i, {b[i].data(), b[i].size()});
          }
          EXPECT_EQ(kernel->held_weights().size(), 3u);
          std::vector<TensorArg> in{{a.data(), a.dims}};
          for (int i = 0; i < 3; ++i) in.push_back({nullptr, b[i].dims});
          for (int i = 0; i < 3; ++i) in.push_back({bias[i].data(), bias[i].dims});
          std::unique_ptr<ThreadPool> pool = threads > 1 ? std::make_unique<ThreadPool>(threads - 1) : nullptr;
          RunContext ctx{pool.get(), threads, nullptr};
          Buffer o(std::vector<float>(m * n, std::nanf("")), {m, n});
          kernel->run(ctx, in, o.storage.data(), o.dims);
          for (size_t i = o.size(); i < o.storage.size(); ++i) ASSERT_EQ(o.storage[i], kSentinel) << "wrote past the end";

          int64_t col = 0;
          for (int i = 0; i < 3; ++i) {
            std::vector<float> want(static_cast<size_t>(m * widths[i]));
            reference_gemm(a.data(), b[i].data(), want.data(), m, k, widths[i], bias[i].data(), Activation::Relu,
                           nullptr, transposed);
            for (int64_t r = 0; r < m; ++r)
              for (int64_t j = 0; j < widths[i]; ++j) {
                const float w = want[r * widths[i] + j];
                ASSERT_NEAR(o.storage[r * n + col + j], w, 2e-4f * (1.f + std::abs(w)))
                    << "part " << i << " row " << r << " column " << j;
              }
            col += widths[i];
          }
        }
}

TEST(Gemm, PackedWeightsAreSharedAcrossKernels) {
  const Isa isa = active_isa() == Isa::Scalar ? Isa::Scalar : vector_isas().front();
  if (isa == Isa::Scalar) GTEST_SKIP() << "no vector ISA";
  const size_t before = shared_packed_count();
  Built g8 = build({.a = {8, 64}, .b = {64, 96}});
  Built g32 = build({.a = {32, 64}, .b = {64, 96}, .bias = true});  // another bucket, same weight
  auto k8 = make_gemm_kernel(g8.spec(PrecisionPolicy::f32(), 1), isa);
  auto k32 = make_gemm_kernel(g32.spec(PrecisionPolicy::f32(), 1), isa);
  auto k16 = make_gemm_kernel(g32.spec(PrecisionPolicy::bf16_weights(), 1), isa);
  const std::vector<float> w = random_values(64 * 96, 7);
  k8->set_weight(1, w);
  k32->set_weight(1, w);
  k16->set_weight(1, w);
  auto held = [](const std::unique_ptr<Kernel>& k) {
    const std::vector<Kernel::HeldWeight> w = k->held_weights();
    return w.size() == 1 ? w[0] : Kernel::HeldWeight{};
  };
  EXPECT_NE(held(k8).id, nullptr);
  EXPECT_EQ(held(k8).id, held(k32).id);
  EXPECT_NE(held(k8).id, held(k16).id) << "bf16 packing is another copy";
  EXPECT_GE(held(k8).bytes, 64u * 96u * 4u);
  EXPECT_LT(held(k16).bytes, held(k8).bytes);
  EXPECT_EQ(shared_packed_count(), before + 2);

  std::vector<float> other = w;
  other[100] += 1.f;
  k32->set_weight(1, other);  // the param changed in one graph only
  EXPECT_NE(held(k8).id, held(k32).id);
  EXPECT_EQ(shared_packed_count(), before + 3);
  k8.reset();
  k16.reset();
  EXPECT_EQ(shared_packed_count(), before + 1) << "copies are freed with their last kernel";
}

TEST(Gemm, ConstantBIsPackedAtCompileTime) {
  const std::vector<Isa> isas = vector_isas();
  if (isas.empty()) GTEST_SKIP() << "no vector ISA";
  const auto w = random_values(8 * 5, 3);
  KernelParams mm;
  mm.op = ops::Op::MatMul;
  mm.out = Dims::of({3, 5});
  mm.inputs = {{Dims::of({3, 8}), Source::Activation, nullptr},
               {Dims::of({8, 5}), Source::Constant, std::make_shared<const std::vector<float>>(w)}};
  auto kernel = make_gemm_kernel(mm, isas.front());
  ASSERT_NE(kernel, nullptr);
  EXPECT_FALSE(kernel->owns_weight(1));
  const auto x = random_values(3 * 8 + kSlack, 4);
  std::vector<float> out(15 + kSlack), want(15);
  TensorArg in[2] = {{x.data(), Dims::of({3, 8})}, {w.data(), Dims::of({8, 5})}};
  kernel->run(RunContext{}, in, out.data(), Dims::of({3, 5}));
  reference_gemm(x.data(), w.data(), want.data(), 3, 8, 5);
  for (int i = 0; i < 15; ++i) EXPECT_NEAR(out[i], want[i], 1e-5);
}

TEST(Gemm, FactoryTakesOnlyMatMulsAndNamesTheKernel) {
  const std::vector<Isa> isas = vector_isas();
  if (isas.empty()) GTEST_SKIP() << "no vector ISA";
  Built g = build({.a = {4, 8}, .b = {8, 8}, .bias = true, .act = Activation::Gelu, .residual = true,
                   .policy = PrecisionPolicy::bf16_weights()});
  auto kernel = make_gemm_kernel(g.spec(PrecisionPolicy::bf16_weights(), 1), isas.front());
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(kernel->describe(), "gemm[" + std::string(isa_name(isas.front())) + "]+bias+gelu+residual+bf16");
  EXPECT_TRUE(kernel->owns_weight(1));
  EXPECT_FALSE(kernel->owns_weight(0));
  KernelParams input;
  input.op = ops::Op::Input;
  input.out = Dims::of({4, 8});
  EXPECT_EQ(make_gemm_kernel(input, isas.front()), nullptr) << "an Input node";
  EXPECT_EQ(make_gemm_kernel(g.spec(PrecisionPolicy::f32(), 1), Isa::Scalar), nullptr);
}

TEST(CpuIsa, ForcingEachAvailableIsa) {
  const std::vector<Isa> isas = available_isas();
  ASSERT_FALSE(isas.empty());
  EXPECT_EQ(isas.back(), Isa::Scalar);
  EXPECT_EQ(active_isa(), isas.front());
  for (Isa isa : isas) {
    force_isa(isa);
    EXPECT_EQ(active_isa(), isa);
  }
  reset_forced_isa();
  EXPECT_EQ(active_isa(), isas.front());
#if !defined(__EMSCRIPTEN__)
  EXPECT_THROW(force_isa(Isa::Wasm), Error);
#else
  EXPECT_THROW(force_isa(Isa::Avx2), Error);
#endif
  EXPECT_EQ(active_isa(), isas.front()) << "a refused force changes nothing";
}

}  // namespace
}  // namespace rungs::backend::cpu::gemm
