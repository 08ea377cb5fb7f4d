// SPDX-License-Identifier: Apache-2.0
// core/compile/executor.hpp: runs an optimized graph with one kernel per node.
//
// Built once per compile: a kernel for every non-leaf node (from the device's backend), the
// memory plan, padded copies of constants and params. Each run() takes a workspace (arena +
// kernel scratch) from a pool, so several threads may run one executor at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backends/kernel.hpp"
#include "backends/thread_pool.hpp"
#include "core/ir/graph_impl.hpp"
#include "core/passes/memory_plan.hpp"
#include "rungs/session.hpp"

namespace rungs::compile {

// A float buffer aligned to backend::kBufferAlignment with backend::kReadPastBytes of slack.
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t floats);
  float* data() { return ptr_; }
  const float* data() const { return ptr_; }
  size_t size() const { return size_; }

 private:
  std::unique_ptr<float[]> storage_;
  float* ptr_ = nullptr;
  size_t size_ = 0;
};

// Per node, the runtime dims of one run: the compiled dims, or under active extent the compiled
// dims with the node's row axis set to the actual rows.
using RunDims = std::vector<backend::Dims>;

// The flops of a node's products at the given dims (`in`: its inputs'): MatMul and FusedMatMul
// 2 x numel(out) x K (A's last dim); Attention, q [B, Sq, H dh], k [B, Sk, H dh], v [B, Sk, H dv]
// (or all three packed in one [B, S, 2 H dh + H dv]): 2 B Sq Sk (H dh + H dv); 0 for every other
// op. CompiledGraph::profile reports it per kernel, and a run weighs its total to choose its
// threads (Executor::run_threads).
double product_flops(const ir::Node& node, const backend::Dims& out, std::span<const backend::Dims> in);

// Profiling a row segment (Executor::run_segment): every thread runs the segment's kernels on its
// own rows, so no kernel has a wall time of its own. Only the first range's kernels are timed, and
// the other ranges may take longer (their rows come from another core's cache, or their thread
// woke later): on two threads the encoder at 256 tokens ran 1.11 ms a call while its first
// ranges' kernels added up to 0.95. The segment's wall time, taken around the whole of it, is
// therefore shared among its kernels in proportion to their first-range times (equally when those
// are all zero), and the kernels of a profile add up to the run.
std::vector<double> share_wall_time(std::span<const double> first_range_ns, double wall_ns);

class Executor {
 public:
  // `plan` is plan_memory(graph), made by the caller so that it can refuse an arena before
  // anything is allocated for it (CompileOptions::max_arena_bytes).
  // `rows`: the row segments the plan was made with (find_row_segments); on more than one thread
  // each runs split by rows (run_segment), on one thread or the reference device kernel by kernel.
  Executor(ir::GraphImpl graph, passes::MemoryPlan plan, Device device, PrecisionPolicy policy, int threads,
           passes::RowSegments rows = {});
  ~Executor();

  const ir::GraphImpl& graph() const { return graph_; }
  const passes::MemoryPlan& plan() const { return plan_; }

  // Names in declaration order.
  const std::vector<std::string>& input_names() const { return input_names_; }
  const std::vector<std::string>& output_names() const { return output_names_; }
  const std::vector<std::string>& param_names() const { return param_names_; }
  std::optional<uint32_t> input_node(std::string_view name) const;
  std::optional<uint32_t> param_node(std::string_view name) const;
  std::optional<uint32_t> output_node(std::string_view name) const;

  void set_param(std::string_view name, std::span<const float> data);
  bool param_is_set(uint32_t node) const { return param_set_[node]; }

  // Runs with the given dims (the compiled ones unless active extent). Inputs are already matched
  // to nodes and size-checked by the caller: input_data[k] belongs to input_names()[k].
  // With `node_ns`, the wall time of each node's kernel is added to node_ns[node] (profiling).
  std::vector<std::vector<float>> run(std::span<const std::span<const float>> input_data, const RunDims& dims,
                                      std::vector<double>* node_ns = nullptr) const;
  // The same run without copies of its own: fill(k, dest) writes input k into the workspace (dest
  // has the input's size under `dims`), take(j, values) reads output j from it before the
  // workspace is handed to the next run.
  using InputFill = std::function<void(size_t, std::span<float>)>;
  using OutputTake = std::function<void(size_t, std::span<const float>)>;
  void run_in_place(const InputFill& fill, const OutputTake& take, const RunDims& dims,
                    std::vector<double>* node_ns = nullptr) const;
  const RunDims& compiled_dims() const { return compiled_dims_; }

  std::vector<KernelReport> kernel_reports() const;
  // The kernel that runs a node, or nullptr (leaves, aliases).
  const backend::Kernel* kernel(uint32_t node) const { return kernels_[node].get(); }
  size_t arena_bytes() const;
  size_t intermediate_bytes() const;
  size_t param_bytes() const;  // params as stored: kernel-owned (packed) weights + f32 copies
  std::vector<CompiledGraph::WeightBlock> weight_blocks() const;  // the same, one entry per stored copy
  int threads() const { return threads_; }
  // The threads a run at `dims` uses: threads() unless its products average less than
  // kProductFlopsPerThread per thread (kSegmentedFlopsPerThread with row segments; executor.cpp),
  // then fewer, for all of its kernels.
  int run_threads(const RunDims& dims) const;
  // Output elements written by kernels over all runs so far: a work counter that shows active
  // extent skipping padded rows (tests and stats read it).
  uint64_t elements_computed() const { return elements_computed_.load(std::memory_order_relaxed); }

 private:
  struct Workspace {
    AlignedBuffer arena;
    AlignedBuffer scratch;
  };
  std::unique_ptr<Workspace> acquire() const;
  using NodePtr = std::function<float*(uint32_t)>;
  // Runs segment `s` with each thread of `ctx` on its own range of rows; false (and nothing ran)
  // when its rows are too few to split.
  bool run_segment(const passes::RowSegment& s, const backend::RunContext& ctx, const RunDims& dims,
                   const NodePtr& ptr, float* regions, std::vector<double>* node_ns) const;
  void run_node(uint32_t i, const backend::RunContext& ctx, const RunDims& dims, const NodePtr& ptr,
                std::vector<backend::TensorArg>& args, std::vector<double>* node_ns) const;
  void release(std::unique_ptr<Workspace> ws) const;

  ir::GraphImpl graph_;
  Device device_;
  PrecisionPolicy policy_;
  int threads_;
  passes::MemoryPlan plan_;
  RunDims compiled_dims_;
  std::vector<std::unique_ptr<backend::Kernel>> kernels_;  // per node (null for leaves and aliases)
  std::vector<AlignedBuffer> leaf_data_;                   // per node: constants
  // Per param node: its raw copy, interned by content (weight_store.hpp) so graphs share it.
  std::vector<std::shared_ptr<const AlignedBuffer>> param_data_;
  std::vector<bool> needs_raw_;                            // per param node: some consumer reads it raw
  std::vector<bool> param_set_;
  std::vector<std::string> input_names_, output_names_, param_names_;
  std::vector<uint32_t> input_nodes_, param_nodes_;
  std::vector<uint32_t> product_nodes_;  // nodes with a kernel whose product_flops can be > 0
  int64_t product_count_ = 0;            // the products they hold (a product in parts: each part)
  passes::RowSegments rows_;             // segments that run split by rows (none: kernel by kernel)
  size_t scratch_floats_ = 0;
  int scratch_parts_ = 1;                          // scratch buffers: one per range of rows
  size_t row_blocks_floats_ = 0;                   // after them: the block sums of a segment's row
                                                   // reduction (Kernel::sum_row_blocks)
  std::shared_ptr<backend::ThreadPool> own_pool_;  // natively: the pool of graphs of this thread count
  backend::ThreadPool* pool_ = nullptr;            // own_pool_, or wasm's shared pool; null: serial
  mutable std::mutex pool_mu_;
  mutable std::vector<std::unique_ptr<Workspace>> free_;
  mutable std::atomic<uint64_t> elements_computed_{0};
};

}  // namespace rungs::compile
