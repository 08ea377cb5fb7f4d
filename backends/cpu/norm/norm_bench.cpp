// SPDX-License-Identifier: Apache-2.0
// Norm kernels vs their scalar reference: LayerNorm, RmsNorm and FusedAddNorm(LayerNorm) at
// [rows, D]. Run: bench_norm.
#include "backends/cpu/norm/norm.hpp"
#include "backends/cpu/rows/bench.hpp"

namespace rungs::backend::cpu {
namespace {

using ops::Op;
enum Kind { kLayerNorm, kRmsNorm, kAddLayerNorm };

bench::Case make_case(Kind kind, int64_t rows, int64_t d) {
  const Op op = kind == kLayerNorm ? Op::LayerNorm : kind == kRmsNorm ? Op::RmsNorm
                                                                      : Op::FusedAddNorm;
  std::vector<Shape> in{{rows, d}};
  if (kind == kAddLayerNorm) in.push_back({rows, d});
  in.push_back({d});
  if (kind != kRmsNorm) in.push_back({d});
  std::vector<testing::Tensor> t;
  for (size_t i = 0; i < in.size(); ++i) t.push_back(testing::make_tensor(in[i], 1 + i));
  testing::OneOp o(op, {rows, d}, in);
  o.params.norm = NormParams{.rms = kind == kRmsNorm, .add = kind == kAddLayerNorm, .has_beta = kind != kRmsNorm, .eps = 1e-5f};
  return bench::Case(std::move(o), std::move(t));
}

void args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"kind", "rows", "D"})
      ->ArgsProduct({{kLayerNorm, kRmsNorm, kAddLayerNorm}, {16, 64, 256}, {128, 768, 3072}});
}

void BM_norm(benchmark::State& state) {
  auto c = make_case(Kind(state.range(0)), state.range(1), state.range(2));
  bench::measure_kernel(state, c, make_norm_kernel);
}
void BM_norm_reference(benchmark::State& state) {
  auto c = make_case(Kind(state.range(0)), state.range(1), state.range(2));
  const NormParams p = c.op.params.norm;
  bench::measure(state, c.bytes(), 0, [&] { norm_reference(p, c.args, c.out.data(), c.out_dims); });
}
BENCHMARK(BM_norm)->Apply(args);
BENCHMARK(BM_norm_reference)->Apply(args);

}  // namespace
}  // namespace rungs::backend::cpu
