// SPDX-License-Identifier: Apache-2.0
// Gather kernel vs its scalar reference: `rows` ids into a [32000, D] table stored as f32 (read in
// place) or bf16 / f16 (widened on the fly). GB/s counts the rows read (at the stored width) and
// written. Run: bench_gather.
#include "backends/cpu/gather/gather.hpp"
#include "backends/cpu/rows/bench.hpp"

namespace rungs::backend::cpu {
namespace {

using Format = PrecisionPolicy::Format;
constexpr int64_t kVocab = 32000;

bench::Case make_case(int64_t rows, int64_t d) {
  return bench::Case(testing::OneOp(ops::Op::Gather, {rows, d}, {{kVocab, d}, {rows}}, {Source::Param, Source::Activation}),
                     {testing::make_tensor({kVocab, d}, 1), testing::make_tensor({rows}, 2, 0.f, kVocab - 1.f)});
}

void args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"format", "rows", "D"})
      ->ArgsProduct({{int(Format::F32), int(Format::BF16), int(Format::F16)}, {16, 64, 256}, {128, 768, 3072}});
}

void BM_gather(benchmark::State& state) {
  const auto f = Format(state.range(0));
  auto c = make_case(state.range(1), state.range(2));
  auto k = make_gather_kernel(c.op.spec(1, PrecisionPolicy{f}), active_isa());
  if (k->owns_weight(0)) {
    k->set_weight(0, std::span<const float>(c.inputs[0].data.data(), c.inputs[0].numel()));
    c.args[0].data = nullptr;
  }
  state.SetLabel(k->describe());
  const double moved = double(state.range(1) * state.range(2)) * (4 + (f == Format::F32 ? 4 : 2));
  RunContext ctx;
  bench::measure(state, moved, 0, [&] { k->run(ctx, c.args, c.out.data(), c.out_dims); });
}
void BM_gather_reference(benchmark::State& state) {
  auto c = make_case(state.range(1), state.range(2));
  const double moved = double(state.range(1) * state.range(2)) * 8;
  bench::measure(state, moved, 0, [&] { gather_reference(c.args[0], c.args[1], c.out.data()); });
}
BENCHMARK(BM_gather)->Apply(args);
BENCHMARK(BM_gather_reference)->Apply([](benchmark::internal::Benchmark* b) {
  b->ArgNames({"format", "rows", "D"})->ArgsProduct({{int(Format::F32)}, {16, 64, 256}, {128, 768, 3072}});
});

}  // namespace
}  // namespace rungs::backend::cpu
