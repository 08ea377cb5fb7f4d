// SPDX-License-Identifier: Apache-2.0
// Elementwise kernel vs its scalar reference: GELU, bias add (broadcast), and a fused
// bias + GELU program, at transformer shapes [rows, D]. Run: bench_elementwise.
#include "backends/cpu/elementwise/elementwise.hpp"
#include "backends/cpu/rows/bench.hpp"

namespace rungs::backend::cpu {
namespace {

using bench::Case;
using ops::Op;

enum Kind { kGelu, kBiasAdd, kBiasGelu };

Case make_case(Kind kind, int64_t rows, int64_t d) {
  std::vector<Shape> in{{rows, d}};
  if (kind != kGelu) in.push_back({d});
  testing::OneOp o(kind == kGelu ? Op::Gelu : kind == kBiasAdd ? Op::Add
                                                               : Op::FusedElementwise,
                   {rows, d}, in);
  if (kind == kBiasGelu) o.params.elementwise = {{{Op::Add, 2, 0, 1}, {Op::Gelu, 3, 2, 0}}, 4};
  std::vector<testing::Tensor> t;
  for (size_t i = 0; i < in.size(); ++i) t.push_back(testing::make_tensor(in[i], 1 + i));
  return Case(std::move(o), std::move(t));
}

void args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"kind", "rows", "D"})->ArgsProduct({{kGelu, kBiasAdd, kBiasGelu}, {16, 64, 256}, {128, 768, 3072}});
}

void BM_elementwise(benchmark::State& state) {
  Case c = make_case(Kind(state.range(0)), state.range(1), state.range(2));
  bench::measure_kernel(state, c, make_elementwise_kernel);
}
void BM_elementwise_reference(benchmark::State& state) {
  Case c = make_case(Kind(state.range(0)), state.range(1), state.range(2));
  const KernelParams& params = c.op.params;
  bench::measure(state, c.bytes(), 0, [&] { elementwise_reference(params, c.args, c.out.data(), c.out_dims); });
}
BENCHMARK(BM_elementwise)->Apply(args);
BENCHMARK(BM_elementwise_reference)->Apply(args);

}  // namespace
}  // namespace rungs::backend::cpu
