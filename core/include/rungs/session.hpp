// SPDX-License-Identifier: Apache-2.0
// rungs/session.hpp: compiling graphs and running them.
//
//   Graph --passes (fusion-first pipeline)--> plan --backend--> kernels --run--> outputs
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rungs/graph.hpp"
#include "rungs/hir.hpp"
#include "rungs/types.hpp"

namespace rungs {

// How params are stored; math always accumulates in f32. With bf16/f16 the weights that feed a
// matmul or a gather are kept in that 16-bit format (half the memory); small vectors (bias, norm
// gains) are rounded through the format and kept as f32. See docs/precision.md.
struct PrecisionPolicy {
  enum class Format { F32, BF16, F16 };
  Format weights = Format::F32;

  static PrecisionPolicy f32() { return {Format::F32}; }
  static PrecisionPolicy bf16_weights() { return {Format::BF16}; }
  static PrecisionPolicy f16_weights() { return {Format::F16}; }

  std::string_view name() const;  // "f32", "bf16_weights", "f16_weights"
  friend bool operator==(const PrecisionPolicy&, const PrecisionPolicy&) = default;
};

struct CompileOptions {
  bool fusion = true;                     // false: one kernel per primitive op
  int threads = 0;                        // 0: all hardware threads (native); wasm: 1
  std::optional<PrecisionPolicy> policy;  // none: the Session's (or the cache's) policy, else f32
  bool dump_passes = false;               // keep the IR text after each pass that changed it
  // Refuse (Error(ArenaLimit), before allocating) a compile whose arena would exceed this.
  std::optional<size_t> max_arena_bytes;
};

// One input by name, in its own element type (TensorView: f32, int64, int32 or bool, converted
// exactly to f32; a float span or vector converts implicitly).
struct NamedInput {
  std::string_view name;
  TensorView data;
};

struct PassReport {
  std::string name;
  double ms = 0;
  size_t nodes_before = 0;
  size_t nodes_after = 0;
  bool changed = false;
  std::string ir_after;  // only with CompileOptions::dump_passes and when the pass changed the IR
};

struct KernelReport {
  std::string op;      // the IR op, e.g. "fused_matmul"
  std::string kernel;  // the kernel that runs it, e.g. "gemm[avx512f]+bias+gelu"
  Shape shape;         // output shape
  // On more than one thread, the row segment the kernel runs in (0, 1, ...), or -1: a stretch of
  // row-local kernels between two that are not runs whole on each thread's own rows, with one
  // hand-over at its end instead of one per kernel.
  int row_segment = -1;
};

// One kernel's share of a run, from CompiledGraph::profile: the mean wall time per run, and the
// work it does (flops for products and attention, 0 elsewhere; bytes read and written counting
// each input and the output once), so that a rate can be judged against the machine's peak.
struct KernelProfile {
  std::string op;  // as KernelReport
  std::string kernel;
  Shape shape;       // output shape
  double ms = 0;     // mean per run
  double flops = 0;  // per run
  double bytes = 0;  // per run
};

struct CompileReport {
  Device device = Device::Cpu;
  std::string isa;            // "avx512f", "avx2", "sse4.2", "wasm", "scalar"
  std::string policy;         // PrecisionPolicy::name()
  int threads = 1;
  std::vector<PassReport> passes;
  std::vector<KernelReport> kernels;
  size_t arena_bytes = 0;         // the planned workspace: the arena (buffers reused by liveness)
                                  // and, split by rows on threads, each thread's row region
  size_t intermediate_bytes = 0;  // what the same buffers would take without reuse
  size_t param_bytes = 0;         // params as stored (packed, in the policy's format)
  double compile_ms = 0;

  std::string to_text() const;
  std::string to_json() const;
};

class CompiledGraph {
 public:
  CompiledGraph(CompiledGraph&&) noexcept;
  CompiledGraph& operator=(CompiledGraph&&) noexcept;
  ~CompiledGraph();

  // Size-checked against the param's shape, then copied (packed for the kernels that use it).
  // May be called while other threads run the graph: each run sees the old or the new values,
  // never a mix (it waits for runs in flight, and runs wait for it).
  void set_param(std::string_view name, std::span<const float> data);
  // One vector per output, in declared order. Throws UnknownName, MissingInput, ShapeMismatch,
  // ParamNotSet, and InvalidArgument for an integer input value f32 cannot hold exactly (|v| >
  // 2^24), naming the input and the value. Safe to call from several threads at once.
  std::vector<std::vector<float>> run(std::span<const NamedInput> inputs) const;
  // run() without its copies, for callers that hold the data elsewhere (the npm package's
  // Float32Arrays): fill(k, dest) writes input k (input_names() order; dest has its compiled
  // size) straight into the run's workspace, and take(j, values) reads output j (output_names()
  // order) from it, valid only during the call. Throws ParamNotSet as run() does; filling every
  // input is the caller's part. Safe to call from several threads at once.
  void run_in_place(const std::function<void(size_t, std::span<float>)>& fill,
                    const std::function<void(size_t, std::span<const float>)>& take) const;
  // Runs `repetitions` times (after one warm-up run) with every kernel timed; one entry per kernel
  // in execution order. The same checks as run(); repetitions must be in [1, 100000].
  std::vector<KernelProfile> profile(std::span<const NamedInput> inputs, int repetitions = 20) const;

  const std::vector<std::string>& input_names() const;
  const std::vector<std::string>& output_names() const;
  Shape input_shape(std::string_view name) const;
  Shape output_shape(std::string_view name) const;
  const CompileReport& report() const;

  std::vector<std::string> param_names() const;
  Shape param_shape(std::string_view name) const;
  bool param_is_set(std::string_view name) const;

  // Active extent ("run at less without padding"). prepare_active_rows(extent) checks whether every
  // op is row-local along the axis of size `extent` that the inputs share (or is attention or
  // pooling that can stop at the real keys); if so, run_rows(inputs, rows) computes only `rows`
  // rows: inputs carry `rows` rows along that axis, outputs come back with `rows` rows (outputs
  // without that axis, such as a pooled embedding, keep their shape). See docs/active-extent.md.
  bool prepare_active_rows(int64_t extent);
  bool active_rows_supported() const;
  const std::string& active_rows_reason() const;  // why not, when unsupported
  // When supported: empty if run_rows equals the padded run's real rows; else the first node where
  // a padded run would differ (a plain mean over rows, attention without a key mask). run_rows is
  // then the exact result (the graph as if compiled at `rows`) and the padded run is not.
  const std::string& active_rows_differs_from_padding() const;
  std::vector<std::vector<float>> run_rows(std::span<const NamedInput> inputs, int64_t rows) const;
  // Output elements written by kernels over every run so far (a work counter: a run at fewer rows
  // adds proportionally less).
  uint64_t elements_computed() const;

  // The weight copies this graph holds (kernel-packed weights and raw f32 params). Copies are
  // shared by content across graphs (every bucket of a cache uploading the same param holds one
  // copy); `id` is the same for every graph sharing a copy, so owners can count memory once.
  struct WeightBlock {
    const void* id;
    size_t bytes;
  };
  std::vector<WeightBlock> weight_blocks() const;

  struct Impl;

 private:
  friend class Session;
  explicit CompiledGraph(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class Session {
 public:
  explicit Session(Device device);
  Session& with_policy(PrecisionPolicy policy);

  CompiledGraph compile(const Graph& graph, const CompileOptions& options = {});
  CompiledGraph compile_hir(const HirModule& module, const CompileOptions& options = {});

  Device device() const { return device_; }
  std::optional<PrecisionPolicy> policy() const { return policy_; }

 private:
  Device device_;
  std::optional<PrecisionPolicy> policy_;
};

}  // namespace rungs
