// SPDX-License-Identifier: Apache-2.0
// Attention kernel vs its scalar reference: B=1, H=4, Dh=32, S in {16, 64, 256}, causal or not.
// FLOP/s counts 4*S*S*Dh per head (QK^T and PV), halved for causal. Run: bench_attention.
#include "backends/cpu/attention/attention.hpp"
#include "backends/cpu/rows/bench.hpp"

namespace rungs::backend::cpu {
namespace {

constexpr int64_t kHeads = 4, kHeadDim = 32;

bench::Case make_case(int64_t s, bool causal) {
  const Shape shape{1, s, kHeads * kHeadDim};
  testing::OneOp o(ops::Op::Attention, shape, {shape, shape, shape});
  o.params.attention.heads = kHeads;
  o.params.attention.causal = causal;
  return bench::Case(std::move(o),
                     {testing::make_tensor(shape, 1), testing::make_tensor(shape, 2), testing::make_tensor(shape, 3)});
}

double flops(int64_t s, bool causal) { return 4.0 * double(s * s * kHeadDim * kHeads) * (causal ? 0.5 : 1.0); }

void args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"S", "causal", "threads"})->ArgsProduct({{16, 64, 256}, {0, 1}, {1, 2}});
}

void BM_attention(benchmark::State& state) {
  auto c = make_case(state.range(0), state.range(1));
  bench::measure_kernel(state, c, make_attention_kernel, flops(state.range(0), state.range(1)),
                        static_cast<int>(state.range(2)));
}
void BM_attention_reference(benchmark::State& state) {
  auto c = make_case(state.range(0), state.range(1));
  const AttentionParams p = c.op.params.attention;
  bench::measure(state, c.bytes(), flops(state.range(0), state.range(1)),
                 [&] { attention_reference(p, c.args, c.out.data()); });
}
BENCHMARK(BM_attention)->Apply(args);
BENCHMARK(BM_attention_reference)->ArgNames({"S", "causal"})->ArgsProduct({{16, 64, 256}, {0, 1}});

}  // namespace
}  // namespace rungs::backend::cpu
