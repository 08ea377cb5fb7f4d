// SPDX-License-Identifier: Apache-2.0
// Softmax kernel vs its scalar reference over the last axis at [rows, D]. Run: bench_softmax.
#include "backends/cpu/rows/bench.hpp"
#include "backends/cpu/softmax/softmax.hpp"

namespace rungs::backend::cpu {
namespace {

bench::Case make_case(int64_t rows, int64_t d) {
  testing::OneOp o(ops::Op::Softmax, {rows, d}, {{rows, d}});
  o.params.softmax.axis = 1;
  return bench::Case(std::move(o), {testing::make_tensor({rows, d}, 1)});
}

void args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"rows", "D"})->ArgsProduct({{16, 64, 256}, {128, 768, 3072}});
}

void BM_softmax(benchmark::State& state) {
  auto c = make_case(state.range(0), state.range(1));
  bench::measure_kernel(state, c, make_softmax_kernel);
}
void BM_softmax_reference(benchmark::State& state) {
  auto c = make_case(state.range(0), state.range(1));
  bench::measure(state, c.bytes(), 0, [&] { softmax_reference(1, c.args[0], c.out.data()); });
}
BENCHMARK(BM_softmax)->Apply(args);
BENCHMARK(BM_softmax_reference)->Apply(args);

}  // namespace
}  // namespace rungs::backend::cpu
