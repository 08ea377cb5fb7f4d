// SPDX-License-Identifier: Apache-2.0
// backends/cpu/rows/bench.hpp: what the row-kernel benchmarks share. A Case holds one op's params,
// its inputs and output buffer; `measure` times the vector kernel (best ISA of this machine, on
// one thread or more) or a scalar reference on it and reports bytes moved (GB/s) and, when given, FLOP/s.
#pragma once

#include <benchmark/benchmark.h>

#include <functional>
#include <memory>
#include <vector>

#include "backends/cpu/rows/testing.hpp"
#include "backends/thread_pool.hpp"

namespace rungs::backend::cpu::bench {

struct Case {
  testing::OneOp op;
  std::vector<testing::Tensor> inputs;
  std::vector<TensorArg> args;
  Dims out_dims;
  std::vector<float> out;

  Case(testing::OneOp o, std::vector<testing::Tensor> in) : op(std::move(o)), inputs(std::move(in)) {
    for (const auto& t : inputs) args.push_back(t.arg());
    out_dims = op.params.out;
    out.assign(out_dims.numel() + testing::kSlackFloats, 0.f);
  }
  // Bytes a kernel must read and write at least once.
  double bytes() const {
    double b = static_cast<double>(out_dims.numel());
    for (const auto& t : inputs) b += static_cast<double>(t.numel());
    return b * sizeof(float);
  }
};

// Times fn() and reports GB/s of `bytes` per call (and FLOP/s when flops > 0).
inline void measure(benchmark::State& state, double bytes, double flops, const std::function<void()>& fn) {
  for (auto _ : state) {
    fn();
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes * static_cast<double>(state.iterations())));
  if (flops > 0)
    state.counters["FLOP/s"] = benchmark::Counter(flops * static_cast<double>(state.iterations()),
                                                  benchmark::Counter::kIsRate);
}

// The vector kernel `make(spec, isa)` at the best ISA here, on `threads` threads (the caller and
// a pool of threads - 1 workers, as a compiled graph runs it).
template <class Make>
void measure_kernel(benchmark::State& state, Case& c, Make make, double flops = 0, int threads = 1) {
  auto k = make(c.op.spec(1), active_isa());
  if (!k) {
    state.SkipWithError("no vector kernel for this node");
    return;
  }
  state.SetLabel(k->describe());
  RunContext ctx;
  std::shared_ptr<ThreadPool> pool;
  if (threads > 1) {
    pool = ThreadPool::shared_for(threads - 1);
    ctx.pool = pool.get();
    ctx.threads = threads;
  }
  std::vector<float> scratch(k->scratch_floats() + testing::kSlackFloats);
  ctx.scratch = scratch.data();
  measure(state, c.bytes(), flops, [&] { k->run(ctx, c.args, c.out.data(), c.out_dims); });
}

}  // namespace rungs::backend::cpu::bench
