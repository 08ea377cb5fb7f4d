// SPDX-License-Identifier: Apache-2.0
// backends/kernel.hpp: what the executor asks of a backend.
//
// The compiler hands each node of the optimized graph, described by a KernelParams (below: no IR),
// to a backend's kernel factory once, at compile time (shapes are static there, so a kernel may
// pack weights, choose blockings and size scratch).
// At run time the executor calls Kernel::run with the input buffers and their *runtime* dims. The
// runtime dims equal the compiled ones, except under active extent (CompiledGraph::run_rows) where
// one axis may be shorter; every kernel must honour the dims it is given, and buffers are always
// dense row-major for the runtime dims.
//
// Buffers: every buffer handed to a kernel may be read up to kReadPastBytes past its logical end
// (the arena and the executor's copies allocate that slack), so a vector kernel may load a full
// SIMD batch at a row's tail as long as it never *uses* the extra lanes. Writes never go past the
// logical end.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/ops.hpp"
#include "rungs/session.hpp"

namespace rungs::backend {

constexpr size_t kReadPastBytes = 64;   // one AVX-512 register
constexpr size_t kBufferAlignment = 64;

struct Dims {
  int rank = 0;
  std::array<int64_t, ops::kMaxRank> d{};

  static Dims of(const Shape& s) {
    Dims r;
    r.rank = static_cast<int>(s.size());
    for (int i = 0; i < r.rank; ++i) r.d[i] = s[i];
    return r;
  }
  int64_t operator[](int i) const { return d[i]; }
  int64_t& operator[](int i) { return d[i]; }
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < rank; ++i) n *= d[i];
    return n;
  }
  // Product of the dims before the last one (the "rows" of a row op).
  int64_t rows() const {
    int64_t n = 1;
    for (int i = 0; i + 1 < rank; ++i) n *= d[i];
    return n;
  }
  int64_t last() const { return rank ? d[rank - 1] : 1; }
  friend bool operator==(const Dims& a, const Dims& b) {
    if (a.rank != b.rank) return false;
    for (int i = 0; i < a.rank; ++i)
      if (a.d[i] != b.d[i]) return false;
    return true;
  }
};

struct TensorArg {
  const float* data;
  Dims dims;
};

class ThreadPool;

struct RunContext {
  ThreadPool* pool = nullptr;  // null: run on the calling thread
  int threads = 1;             // how many threads a kernel may use (pool size + caller)
  float* scratch = nullptr;    // Kernel::scratch_floats() floats, private to this run call
  // Split [0, n) into contiguous chunks of at least `grain` items and call fn(begin, end) on
  // up to `threads` threads; returns when all chunks are done. Serial when pool is null or the
  // work makes one chunk: then fn is called directly, with no std::function made (whose heap
  // copy of a kernel's lambda, and in WebAssembly its indirect call through JS, a kernel would
  // otherwise pay on every run).
  template <class F>
  void parallel_for(int64_t n, int64_t grain, F&& fn) const {
    if (n <= 0) return;
    const int parts = parts_for(n, grain);
    if (pool == nullptr || parts <= 1) {
      fn(int64_t{0}, n);
      return;
    }
    run_parts(n, parts, std::ref(fn));  // a reference_wrapper fits std::function's own buffer
  }
  // n tasks (each worth at least a few tens of microseconds), each claimed by the next thread
  // that is free, instead of one contiguous range per thread: where the cores run at different
  // speeds (hybrid cores, a core shared with another process or virtual machine) a fast one takes
  // more tasks and the call ends when the work does, not when the slowest core's share does. The
  // chunks are then [t, t + 1) (at most ThreadPool::kMaxParts of them); parallel_for(n, 1, fn)'s
  // chunks when the pool has more threads than this context may use.
  template <class F>
  void parallel_tasks(int64_t n, F&& fn) const {
    if (n <= 0) return;
    const int parts = task_parts(n);
    if (pool == nullptr || parts <= 1) {
      fn(int64_t{0}, n);
      return;
    }
    run_parts(n, parts, std::ref(fn));
  }
  int parts_for(int64_t n, int64_t grain) const;  // the chunks parallel_for makes (>= 1)
  int task_parts(int64_t n) const;                // the chunks parallel_tasks makes (>= 1)
  void run_parts(int64_t n, int parts, const std::function<void(int64_t, int64_t)>& fn) const;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  // in[i] is input i of the node, out is sized for out_dims (+ kReadPastBytes of slack).
  virtual void run(const RunContext& ctx, std::span<const TensorArg> in, float* out,
                   const Dims& out_dims) const = 0;
  // Scratch this kernel needs per run call, for the compiled shapes (the maximum).
  virtual size_t scratch_floats() const { return 0; }
  // A kernel may keep its own copy of a Param input (packed, in the policy's format). For such an
  // input the executor calls set_weight when the param is set, and passes data == nullptr for it
  // at run time (dims still given).
  virtual bool owns_weight(size_t input_index) const {
    (void)input_index;
    return false;
  }
  virtual void set_weight(size_t input_index, std::span<const float> data) {
    (void)input_index;
    (void)data;
  }
  // The weight copies this kernel holds (packed params), each with its bytes and an id: a copy
  // shared with other kernels (and graphs) has the same id in each, so owners count it once.
  struct HeldWeight {
    const void* id = nullptr;
    size_t bytes = 0;
  };
  virtual std::vector<HeldWeight> held_weights() const { return {}; }
  // A sum or mean over rows that ends a row segment (core/passes/row_segments.hpp) runs split by
  // rows too: each thread sums blocks of kRowBlock rows of its own range (sum_row_blocks), and
  // finish_row_blocks adds the blocks in order on one thread. run() sums in the same blocks in
  // the same order, so a split gives the same bits as one thread. x is `rows` rows of `inner`
  // floats (rows first_row.. of the input, first_row a multiple of kRowBlock); `blocks` holds
  // one row of inner floats per block of the whole input (+ kReadPastBytes).
  static constexpr int64_t kRowBlock = 4;
  virtual bool sums_row_blocks() const { return false; }
  virtual void sum_row_blocks(const float* x, int64_t rows, int64_t inner, int64_t first_row, float* blocks) const {
    (void)x, (void)rows, (void)inner, (void)first_row, (void)blocks;
  }
  // out = the blocks of `rows` rows combined in order (a mean divides by rows).
  virtual void finish_row_blocks(const float* blocks, int64_t rows, int64_t inner, float* out) const {
    (void)blocks, (void)rows, (void)inner, (void)out;
  }
  // Kernel name for the report, e.g. "gemm[avx512f]+bias+gelu".
  virtual std::string describe() const = 0;
};

// What a kernel factory is told about one node, made by core/compile from the IR node
// (core/compile/kernel_params.cpp). Everything is by value and compile-time: the op, the compiled
// dims of the output and of each input, where each input comes from, the precision policy and
// thread count, and the op's own parameters in the struct of its family (the others stay at their
// defaults). A kernel test builds one directly.

// Where an input comes from: another node's output (or a graph input), a Param (set later with
// set_weight or handed in at run time) or a Constant (its values are known now).
enum class Source : uint8_t {
  Activation,
  Param,
  Constant
};

struct InputParams {
  Dims dims;  // compiled
  Source source = Source::Activation;
  std::shared_ptr<const std::vector<float>> data;  // a Constant's values; null otherwise
};

// Op::Softmax: along `axis`, in [0, rank).
struct SoftmaxParams {
  int axis = 0;
};

// Op::LayerNorm, Op::RmsNorm (over the last axis) and Op::FusedAddNorm (norm of in[0] + in[1]).
// Inputs: x (or a, b), gamma, then beta when has_beta.
struct NormParams {
  bool rms = false;       // RmsNorm (no centring, no beta)
  bool add = false;       // FusedAddNorm: the row is in[0] + in[1]
  bool has_beta = false;  // LayerNorm's shift
  float eps = 1e-5f;
};

// Op::ReduceSum, Op::ReduceMean, Op::ReduceMax over `axes` (sorted, in [0, rank) of the input).
enum class ReduceKind : uint8_t {
  Sum,
  Mean,
  Max
};
struct ReduceParams {
  ReduceKind kind = ReduceKind::Sum;
  std::vector<int64_t> axes;
};

// Op::Attention: q, k, v, then the [B, Sk] keep mask when has_mask.
struct AttentionParams {
  int heads = 1;
  bool causal = false;
  bool has_mask = false;
  std::optional<float> scale;  // none: 1/sqrt(head_dim) at run time (an explicit 0 is a valid scale)
  // > 0: q, k and v are one [B, S, 2 * packed_qk + Dv] tensor (given as all three inputs): q its
  // first packed_qk columns, k the next packed_qk, v the rest (self-attention only: Sq == Sk).
  int64_t packed_qk = 0;
};

// Op::FusedElementwise: the program of one output element (ops::Instr, scalar constants in its
// immediates). A primitive elementwise op has none: its op is its program.
struct ElementwiseParams {
  std::vector<ops::Instr> code;
  int regs = 0;  // registers the program uses, inputs included
};

// Data movement (reference kernels only): Op::Transpose (output axis i is input axis perm[i]),
// Op::Slice (`length` entries from `start` along `axis`), Op::Concat (along `axis`).
struct TransposeParams {
  std::vector<int64_t> perm;
};
struct SliceParams {
  int axis = 0;
  int64_t start = 0, length = 0;
};
struct ConcatParams {
  int axis = 0;
};

struct KernelParams {
  ops::Op op = ops::Op::Input;
  Dims out;                         // compiled output dims
  std::vector<InputParams> inputs;  // one per input of the node, in order
  PrecisionPolicy policy = PrecisionPolicy::f32();
  int threads = 1;

  // The op's own parameters: only its family's member is read.
  ops::Epilogue epilogue;  // Op::FusedMatMul (Op::MatMul: none)
  ElementwiseParams elementwise;
  SoftmaxParams softmax;
  NormParams norm;
  ReduceParams reduce;
  AttentionParams attention;
  TransposeParams transpose;
  SliceParams slice;
  ConcatParams concat;
};

// Scalar loops for every op: the correctness oracle (Device::Reference).
std::unique_ptr<Kernel> make_reference_kernel(const KernelParams& params);
// xsimd kernels at the best ISA of this machine (Device::Cpu); ops without a vector kernel fall
// back to the reference kernel.
std::unique_ptr<Kernel> make_cpu_kernel(const KernelParams& params);
// (The ISA it dispatches to: rungs::cpu_isa(), rungs/isa.hpp.)

}  // namespace rungs::backend
