// SPDX-License-Identifier: Apache-2.0
// Norm kernels vs their scalar reference: LayerNorm, RmsNorm and FusedAddNorm(LayerNorm) at
// [rows, D]. Run: bench_norm.
#include "backends/cpu/norm/norm.hpp"
#include "backends/cpu/rows/bench.hpp"

namespace rungs::backend::cpu {
namespace {

using ir::Op;
enum Kind { kLayerNorm, kRmsNorm, kAddLayerNorm };

bench::Case make_case(Kind kind, int64_t rows, int64_t d) {
  ir::Node n;
  n.op = kind == kLayerNorm ? Op::LayerNorm : kind == kRmsNorm ? Op::RmsNorm : Op::FusedAddNorm;
  n.norm = Op::LayerNorm;
  n.shape = {rows, d};
  n.eps = 1e-5f;
  std::vector<Shape> in{{rows, d}};
  if (kind == kAddLayerNorm) in.push_back({rows, d});
  in.push_back({d});
  if (kind != kRmsNorm) in.push_back({d});
  std::vector<testing::Tensor> t;
  for (size_t i = 0; i < in.size(); ++i) t.push_back(testing::make_tensor(in[i], 1 + i));
  return bench::Case(testing::OneNode(in, std::move(n)), std::move(t));
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
  const NormParams p = norm_params(c.graph.graph.at(c.graph.node));
  bench::measure(state, c.bytes(), 0, [&] { norm_reference(p, c.args, c.out.data(), c.out_dims); });
}
BENCHMARK(BM_norm)->Apply(args);
BENCHMARK(BM_norm_reference)->Apply(args);

}  // namespace
}  // namespace rungs::backend::cpu
