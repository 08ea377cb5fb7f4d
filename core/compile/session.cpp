// SPDX-License-Identifier: Apache-2.0
// core/compile/session.cpp: Graph -> pipeline -> executor.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>

#include "backends/kernel.hpp"
#include "backends/thread_pool.hpp"
#include "core/check.hpp"
#include "core/compile/compiled_graph_impl.hpp"
#include "core/compile/pipeline.hpp"
#include "core/ir/graph_access.hpp"
#include "rungs/isa.hpp"

namespace rungs {

std::string_view PrecisionPolicy::name() const {
  switch (weights) {
    case Format::F32: return "f32";
    case Format::BF16: return "bf16_weights";
    case Format::F16: return "f16_weights";
  }
  return "?";
}

Session::Session(Device device) : device_(device) {}

Session& Session::with_policy(PrecisionPolicy policy) {
  policy_ = policy;
  return *this;
}

namespace {
int resolve_threads(int requested) {
  // Refused on every platform, so a program behaves alike natively and in wasm.
  if (requested < 0) fail(ErrorCode::InvalidArgument, "compile: threads must be >= 0 (0 = all hardware threads), got " + std::to_string(requested));
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
  return 1;  // the single-threaded wasm variant (pages without cross-origin isolation)
#elif defined(__EMSCRIPTEN__)
  // wasm with pthreads: every graph shares one pool of preloaded Web Workers (ThreadPool::shared),
  // so more threads than it has would only cut the work finer.
  const int cap = backend::ThreadPool::wasm_threads();
  return requested == 0 ? cap : std::min(requested, cap);
#else
  return requested == 0 ? backend::ThreadPool::hardware_threads() : requested;
#endif
}
}  // namespace

CompiledGraph Session::compile(const Graph& graph, const CompileOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const ir::GraphImpl& src = ir::impl_of(graph);
  if (src.outputs.empty())
    fail(ErrorCode::InvalidArgument, "compile: the graph has no outputs; mark at least one with output(name, value)");
  const int threads = resolve_threads(options.threads);
  const PrecisionPolicy policy = options.policy ? *options.policy : policy_ ? *policy_ : PrecisionPolicy::f32();

  auto impl = std::make_unique<CompiledGraph::Impl>();
  CompileReport& rep = impl->report;
  rep.device = device_;
  rep.policy = std::string(policy.name());
  rep.threads = threads;
  rep.isa = device_ == Device::Cpu ? cpu_isa() : "scalar";

  ir::GraphImpl g = src;
  compile::run_pipeline(g, options, rep.passes);

  const auto tp = std::chrono::steady_clock::now();
  // Row segments (row_segments.hpp): only where threads can split them.
  passes::RowSegments rows;
  if (device_ == Device::Cpu && threads > 1) rows = passes::find_row_segments(g);
  passes::MemoryPlan memory = passes::plan_memory(g, rows);
  // Refused here, before any kernel, constant copy, thread or arena exists. In 64 bits: a size_t
  // of 32 bits (wasm) would wrap a large arena into a small one.
  const uint64_t arena_bytes = static_cast<uint64_t>(memory.workspace_floats(threads)) * sizeof(float);
  if (arena_bytes > std::numeric_limits<size_t>::max() / 2)
    fail(ErrorCode::OutOfRange, "compile: the arena needs " + std::to_string(arena_bytes) +
                                    " bytes, more than this platform can address");
  if (options.max_arena_bytes && arena_bytes > *options.max_arena_bytes)
    fail(ErrorCode::ArenaLimit, "compile: the arena needs " + std::to_string(arena_bytes) +
                                    " bytes, more than max_arena_bytes = " + std::to_string(*options.max_arena_bytes));
  auto exec = std::make_unique<compile::Executor>(std::move(g), std::move(memory), device_, policy, threads, std::move(rows));
  PassReport plan;
  plan.name = "memory_plan+kernels";
  plan.nodes_before = plan.nodes_after = exec->graph().nodes.size();
  plan.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - tp).count();
  rep.passes.push_back(plan);

  rep.arena_bytes = exec->arena_bytes();
  rep.intermediate_bytes = exec->intermediate_bytes();
  rep.kernels = exec->kernel_reports();
  rep.param_bytes = exec->param_bytes();
  impl->exec = std::move(exec);
  rep.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return CompiledGraph(std::move(impl));
}

CompiledGraph Session::compile_hir(const HirModule& module, const CompileOptions& options) {
  return compile(module.lower(), options);
}

}  // namespace rungs
