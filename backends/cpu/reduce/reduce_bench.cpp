// SPDX-License-Identifier: Apache-2.0
// Reduce kernel vs its scalar reference: ReduceMean over the last axis ([rows, D] -> [rows]) and
// over the rows ([rows, D] -> [D], mean pooling). Run: bench_reduce.
#include "backends/cpu/reduce/reduce.hpp"
#include "backends/cpu/rows/bench.hpp"

namespace rungs::backend::cpu {
namespace {

bench::Case make_case(int64_t axis, int64_t rows, int64_t d) {
  testing::OneOp o(ops::Op::ReduceMean, axis == 1 ? Shape{rows} : Shape{d}, {{rows, d}});
  o.params.reduce = {ReduceKind::Mean, {axis}};
  return bench::Case(std::move(o), {testing::make_tensor({rows, d}, 1)});
}

void args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"axis", "rows", "D"})->ArgsProduct({{0, 1}, {16, 64, 256}, {128, 768, 3072}});
}

void BM_reduce_mean(benchmark::State& state) {
  auto c = make_case(state.range(0), state.range(1), state.range(2));
  bench::measure_kernel(state, c, make_reduce_kernel);
}
void BM_reduce_mean_reference(benchmark::State& state) {
  auto c = make_case(state.range(0), state.range(1), state.range(2));
  const std::vector<int64_t> axes{state.range(0)};
  bench::measure(state, c.bytes(), 0, [&] { reduce_reference(ReduceKind::Mean, axes, c.args[0], c.out.data()); });
}
BENCHMARK(BM_reduce_mean)->Apply(args);
BENCHMARK(BM_reduce_mean_reference)->Apply(args);

}  // namespace
}  // namespace rungs::backend::cpu
