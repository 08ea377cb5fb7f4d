// SPDX-License-Identifier: Apache-2.0
#include "core/compile/executor.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <new>

#include "core/check.hpp"
#include "core/compile/kernel_params.hpp"
#include "core/compile/weight_store.hpp"
#include "core/numeric/half.hpp"

namespace rungs::compile {

using ir::Op;

AlignedBuffer::AlignedBuffer(size_t floats) : size_(floats) {
  constexpr size_t align = backend::kBufferAlignment / sizeof(float);
  constexpr size_t slack = backend::kReadPastBytes / sizeof(float);
  storage_ = std::make_unique<float[]>(floats + align + slack);
  auto addr = reinterpret_cast<uintptr_t>(storage_.get());
  size_t skip = ((backend::kBufferAlignment - addr % backend::kBufferAlignment) % backend::kBufferAlignment) / sizeof(float);
  ptr_ = storage_.get() + skip;
}

namespace {

// A run whose products (product_flops) average less than this per thread runs on fewer threads,
// every kernel of it, whatever each kernel would choose alone. A short run's kernels are a few
// microseconds each, and two threads hand rows across cores at every step: a kernel reading or
// overwriting rows the other core wrote last waits for them (on the 2-vCPU Zen 5 VM, 64 KB
// took about 7 us). Natively sentence_pre_ln at 32 tokens (products of 1.5 MFLOP on average) took
// 0.148-0.164 ms on two threads against 0.134 on one, with its one-thread GEMMs slower too (0.0043
// -> 0.0094 ms for the output projection after a split attention), and at 48 (2.3 MFLOP)
// 0.219-0.229 against 0.191-0.193; two threads were faster for the encoder at 48 (2.9 MFLOP) and
// sentence_pre_ln at 64 (3.2), and for the mlp at 256, two products of 8.4 MFLOP (0.091 against
// 0.117 ms), which a limit on the run's total (24 MFLOP) had kept on one thread. The average, not
// the total: what the threads cost is a hand-over per kernel. Not measured in WebAssembly, whose
// kernels and pool differ: there each kernel decides alone.
//
// A run with row segments (row_segments.hpp) hands over once per segment, not once per kernel, and
// pays off sooner. With segments and no limit, two threads against one (bench/native/run.mjs):
// the encoder 1.04x / 1.08x / 1.41x at 8 / 16 / 32 tokens (1.07x at 32 without segments), but
// distilbert 0.70x / 0.78x / 0.92x and sentence_pre_ln 0.87x / 0.93x at 8 / 16. With 1 MFLOP (0.8
// and 1.2 measured alike) every model at 8-48 tokens ran at 0.97x-1.40x.
#if defined(__EMSCRIPTEN__)
constexpr double kProductFlopsPerThread = 0;
constexpr double kSegmentedFlopsPerThread = 0;
#else
constexpr double kProductFlopsPerThread = 2.5e6;
constexpr double kSegmentedFlopsPerThread = 1.0e6;
#endif

float round_through(PrecisionPolicy::Format f, float x) {
  switch (f) {
    case PrecisionPolicy::Format::BF16: return numeric::bf16_to_f32(numeric::f32_to_bf16(x));
    case PrecisionPolicy::Format::F16: return numeric::f16_to_f32(numeric::f32_to_f16(x));
    case PrecisionPolicy::Format::F32: break;
  }
  return x;
}

}  // namespace

std::vector<double> share_wall_time(std::span<const double> first_range_ns, double wall_ns) {
  double sum = 0;
  for (double t : first_range_ns) sum += t;
  std::vector<double> shared(first_range_ns.size(), 0.0);
  for (size_t i = 0; i < shared.size(); ++i)
    shared[i] = sum > 0 ? first_range_ns[i] / sum * wall_ns : wall_ns / static_cast<double>(shared.size());
  return shared;
}

Executor::Executor(ir::GraphImpl graph, passes::MemoryPlan plan, Device device, PrecisionPolicy policy, int threads,
                   passes::RowSegments rows)
    : graph_(std::move(graph)),
      device_(device),
      policy_(policy),
      threads_(std::max(threads, 1)),
      plan_(std::move(plan)),
      rows_(std::move(rows)) {
  const uint32_t n = static_cast<uint32_t>(graph_.nodes.size());
  internal_check(plan_.root.size() == n, "executor: the memory plan is not the graph's");
  compiled_dims_.resize(n);
  kernels_.resize(n);
  leaf_data_.resize(n);
  param_data_.resize(n);
  needs_raw_.assign(n, false);
  param_set_.assign(n, false);
  for (uint32_t i = 0; i < n; ++i) {
    const ir::Node& node = graph_.nodes[i];
    compiled_dims_[i] = backend::Dims::of(node.shape);
    switch (node.op) {
      case Op::Input:
        input_names_.push_back(node.name);
        input_nodes_.push_back(i);
        break;
      case Op::Param:
        param_names_.push_back(node.name);
        param_nodes_.push_back(i);
        break;
      case Op::Constant: {
        leaf_data_[i] = AlignedBuffer(node.data->size());
        std::copy(node.data->begin(), node.data->end(), leaf_data_[i].data());
        break;
      }
      case Op::Reshape:
        break;  // an alias of its input: no kernel
      default: {
        const backend::KernelParams params = kernel_params(graph_, i, policy_, threads_);
        kernels_[i] = device_ == Device::Cpu ? backend::make_cpu_kernel(params) : backend::make_reference_kernel(params);
        scratch_floats_ = std::max(scratch_floats_, kernels_[i]->scratch_floats());
        if (node.op == Op::MatMul || node.op == Op::FusedMatMul || node.op == Op::Attention) {
          product_nodes_.push_back(i);
          // A product of B in parts (fuse_qkv) counts as its parts: the limit below was measured
          // on one product per weight, and three averaged as one put distilbert at 64 tokens on
          // two threads, 0.94x-0.96x its one-thread time (1.00x before the pass).
          product_count_ += node.op == Op::FusedMatMul ? node.epi.b_parts : 1;
        }
      }
    }
  }
  // A param needs a raw (f32) copy unless every reader is a kernel that keeps its own.
  for (uint32_t i = 0; i < n; ++i) {
    const ir::Node& node = graph_.nodes[i];
    for (size_t k = 0; k < node.in.size(); ++k) {
      uint32_t src = node.in[k];
      if (graph_.nodes[src].op != Op::Param) continue;
      if (!kernels_[i] || !kernels_[i]->owns_weight(k)) needs_raw_[src] = true;
    }
  }
  for (const auto& o : graph_.outputs) {
    output_names_.push_back(o.first);
    if (graph_.nodes[o.second].op == Op::Param) needs_raw_[o.second] = true;
  }
  // Segments run split by rows on the CPU device with threads (else everything, regional buffers
  // too, runs unsplit: region 0 holds all rows). Every segment runs split whenever its rows allow,
  // as the row regions assume: a kernel that needs scratch gets one per range of rows.
  if (device_ != Device::Cpu || threads_ <= 1) rows_.segments.clear();
  scratch_parts_ = rows_.segments.empty() ? 1 : threads_;
  for (const passes::RowSegment& s : rows_.segments) {
    if (!s.reduces) continue;
    internal_check(kernels_[s.last]->sums_row_blocks(), "executor: a row reduction's kernel cannot split its rows");
    const backend::Dims& in = compiled_dims_[graph_.nodes[s.last].in[0]];
    const int64_t rows = in[rows_.row_axis[graph_.nodes[s.last].in[0]]], inner = in.numel() / std::max<int64_t>(rows, 1);
    const int64_t blocks = (rows + backend::Kernel::kRowBlock - 1) / backend::Kernel::kRowBlock;
    row_blocks_floats_ = std::max(row_blocks_floats_, static_cast<size_t>(blocks * inner) + backend::kReadPastBytes / sizeof(float));
  }
#if defined(__EMSCRIPTEN_PTHREADS__)
  if (threads_ > 1) pool_ = &backend::ThreadPool::shared();  // see ThreadPool::shared
#else
  if (threads_ > 1) {
    own_pool_ = backend::ThreadPool::shared_for(threads_ - 1);  // see ThreadPool::shared_for
    pool_ = own_pool_.get();
  }
#endif
}

Executor::~Executor() = default;

double product_flops(const ir::Node& node, const backend::Dims& out, std::span<const backend::Dims> in) {
  const Op op = node.op;
  if ((op == Op::MatMul || op == Op::FusedMatMul) && !in.empty() && in[0].rank > 0)
    return 2.0 * static_cast<double>(out.numel()) * static_cast<double>(in[0].last());
  if (op == Op::Attention && in.size() >= 3 && in[0].rank == 3 && in[1].rank == 3 && in[2].rank == 3) {
    const int64_t packed_qk = node.ints.empty() ? 0 : node.ints[0];
    const int64_t widths = packed_qk ? in[0][2] - packed_qk : in[0][2] + in[2][2];  // q's + v's
    return 2.0 * static_cast<double>(in[0][0]) * static_cast<double>(in[0][1]) * static_cast<double>(in[1][1]) *
           static_cast<double>(widths);
  }
  return 0;
}

int Executor::run_threads(const RunDims& dims) const {
  const double per_thread = rows_.segments.empty() ? kProductFlopsPerThread : kSegmentedFlopsPerThread;
  if (threads_ <= 1 || per_thread <= 0 || product_nodes_.empty()) return threads_;
  double flops = 0;
  std::array<backend::Dims, 3> in;
  for (uint32_t i : product_nodes_) {
    const ir::Node& node = graph_.nodes[i];
    const size_t n = std::min(node.in.size(), in.size());
    for (size_t k = 0; k < n; ++k) in[k] = dims[node.in[k]];
    flops += product_flops(node, dims[i], std::span<const backend::Dims>(in.data(), n));
  }
  const double average = flops / static_cast<double>(product_count_);
  return static_cast<int>(std::clamp<double>(1 + average / per_thread, 1, threads_));
}

std::optional<uint32_t> Executor::input_node(std::string_view name) const {
  for (size_t k = 0; k < input_names_.size(); ++k)
    if (input_names_[k] == name) return input_nodes_[k];
  return std::nullopt;
}
std::optional<uint32_t> Executor::param_node(std::string_view name) const {
  for (size_t k = 0; k < param_names_.size(); ++k)
    if (param_names_[k] == name) return param_nodes_[k];
  return std::nullopt;
}
std::optional<uint32_t> Executor::output_node(std::string_view name) const {
  for (const auto& o : graph_.outputs)
    if (o.first == name) return o.second;
  return std::nullopt;
}

void Executor::set_param(std::string_view name, std::span<const float> data) {
  auto id = param_node(name);
  internal_check(id.has_value(), "set_param on an unknown param");
  const uint32_t p = *id;
  // Round through the storage format once, so every consumer sees the stored values (f32: the
  // data as given, no copy).
  std::vector<float> rounded;
  std::span<const float> stored = data;
  if (policy_.weights != PrecisionPolicy::Format::F32) {
    rounded.assign(data.begin(), data.end());
    for (float& x : rounded) x = round_through(policy_.weights, x);
    stored = rounded;
  }
  // Build everything first, then commit: a throwing kernel leaves the old values in place.
  std::shared_ptr<const AlignedBuffer> raw;
  if (needs_raw_[p]) raw = intern_weights(stored);  // shared with every graph holding these values
  for (uint32_t i = 0; i < graph_.nodes.size(); ++i) {
    const ir::Node& node = graph_.nodes[i];
    for (size_t k = 0; k < node.in.size(); ++k)
      if (node.in[k] == p && kernels_[i] && kernels_[i]->owns_weight(k)) kernels_[i]->set_weight(k, data);
  }
  if (needs_raw_[p]) param_data_[p] = std::move(raw);
  param_set_[p] = true;
}

std::unique_ptr<Executor::Workspace> Executor::acquire() const {
  {
    std::lock_guard<std::mutex> lock(pool_mu_);
    if (!free_.empty()) {
      auto ws = std::move(free_.back());
      free_.pop_back();
      return ws;
    }
  }
  auto ws = std::make_unique<Workspace>();
  // Each range of rows' scratch, then the block sums of a segment's row reduction.
  const size_t scratch_floats = scratch_floats_ * static_cast<size_t>(scratch_parts_) + row_blocks_floats_;
  try {
    ws->arena = AlignedBuffer(static_cast<size_t>(plan_.workspace_floats(threads_)));
    ws->scratch = AlignedBuffer(scratch_floats);
  } catch (const std::bad_alloc&) {
    fail(ErrorCode::OutOfRange, "run: cannot allocate the workspace (arena " + std::to_string(arena_bytes()) +
                                    " bytes + scratch " + std::to_string(scratch_floats * sizeof(float)) +
                                    " bytes); compile with CompileOptions::max_arena_bytes to refuse such graphs early");
  }
  return ws;
}

void Executor::release(std::unique_ptr<Workspace> ws) const {
  std::lock_guard<std::mutex> lock(pool_mu_);
  free_.push_back(std::move(ws));
}

std::vector<std::vector<float>> Executor::run(std::span<const std::span<const float>> input_data,
                                              const RunDims& dims, std::vector<double>* node_ns) const {
  internal_check(input_data.size() == input_nodes_.size(), "executor: input count");
  std::vector<std::vector<float>> out;
  out.reserve(graph_.outputs.size());
  run_in_place(
      [&](size_t k, std::span<float> dest) {
        internal_check(input_data[k].size() == dest.size(), "executor: input size");
        std::memcpy(dest.data(), input_data[k].data(), dest.size() * sizeof(float));
      },
      [&](size_t, std::span<const float> values) { out.emplace_back(values.begin(), values.end()); }, dims, node_ns);
  return out;
}

void Executor::run_in_place(const InputFill& fill, const OutputTake& take, const RunDims& dims,
                            std::vector<double>* node_ns) const {
  struct Guard {
    const Executor* ex;
    std::unique_ptr<Workspace> ws;
    ~Guard() { ex->release(std::move(ws)); }
  } guard{this, acquire()};
  float* arena = guard.ws->arena.data();
  float* regions = arena + plan_.arena_floats;  // thread t's region at t * plan_.region_floats

  // Where a node's values are; a regional buffer's in region 0 (all rows, unsplit).
  auto ptr = [&](uint32_t node) -> float* {
    uint32_t r = plan_.root[node];
    Op op = graph_.nodes[r].op;
    if (op == Op::Param)  // kernels never write params; null when a kernel keeps its own copy
      return param_data_[r] ? const_cast<float*>(param_data_[r]->data()) : nullptr;
    if (op == Op::Constant) return const_cast<float*>(leaf_data_[r].data());
    return (plan_.regional(r) ? regions : arena) + plan_.offset[r];
  };

  for (size_t k = 0; k < input_nodes_.size(); ++k) {
    const uint32_t node = input_nodes_[k];
    fill(k, std::span<float>(ptr(node), static_cast<size_t>(dims[node].numel())));
  }

  backend::RunContext ctx;
  ctx.pool = pool_;
  ctx.threads = run_threads(dims);
  ctx.scratch = guard.ws->scratch.data();
  const NodePtr node_ptr = ptr;
  std::vector<backend::TensorArg> args;
  uint64_t computed = 0;
  const auto& segments = rows_.segments;
  size_t seg = 0;
  for (uint32_t i = 0; i < graph_.nodes.size(); ++i) {
    while (seg < segments.size() && segments[seg].last < i) ++seg;
    if (ctx.threads > 1 && seg < segments.size() && segments[seg].first == i &&
        run_segment(segments[seg], ctx, dims, node_ptr, regions, node_ns)) {
      for (; i <= segments[seg].last; ++i)
        if (kernels_[i]) computed += static_cast<uint64_t>(dims[i].numel());
      i = segments[seg].last;
      continue;
    }
    if (!kernels_[i]) continue;
    run_node(i, ctx, dims, node_ptr, args, node_ns);
    computed += static_cast<uint64_t>(dims[i].numel());
  }
  elements_computed_.fetch_add(computed, std::memory_order_relaxed);

  for (size_t j = 0; j < graph_.outputs.size(); ++j) {
    const uint32_t node = graph_.outputs[j].second;
    take(j, std::span<const float>(ptr(node), static_cast<size_t>(dims[node].numel())));
  }
}

void Executor::run_node(uint32_t i, const backend::RunContext& ctx, const RunDims& dims, const NodePtr& ptr,
                        std::vector<backend::TensorArg>& args, std::vector<double>* node_ns) const {
  const backend::Kernel* kernel = kernels_[i].get();
  const ir::Node& node = graph_.nodes[i];
  args.clear();
  for (size_t k = 0; k < node.in.size(); ++k) {
    uint32_t src = node.in[k];
    const float* data = kernel->owns_weight(k) ? nullptr : ptr(src);
    args.push_back({data, dims[src]});
  }
  if (node_ns) {
    const auto t0 = std::chrono::steady_clock::now();
    kernel->run(ctx, args, ptr(i), dims[i]);
    (*node_ns)[i] += std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  } else {
    kernel->run(ctx, args, ptr(i), dims[i]);
  }
}

bool Executor::run_segment(const passes::RowSegment& s, const backend::RunContext& ctx, const RunDims& dims,
                           const NodePtr& ptr, float* regions, std::vector<double>* node_ns) const {
  // At least kMinRows rows a thread, and ranges on multiples of them: a GEMM's row tiles are 4
  // to 8 rows, and a range cut mid-tile computes a tile twice.
  constexpr int64_t kMinRows = 4;
  const int axis = rows_.row_axis[s.first];
  const int64_t rows = dims[s.first][axis];
  const int parts = static_cast<int>(std::min<int64_t>(ctx.threads, rows / kMinRows));
  if (parts < 2) return false;
  const int64_t chunk = ((rows + parts - 1) / parts + kMinRows - 1) / kMinRows * kMinRows;
  static_assert(kMinRows % backend::Kernel::kRowBlock == 0, "ranges of rows start on blocks of a row reduction");
  const size_t scratch_floats = scratch_floats_;
  float* blocks = ctx.scratch + scratch_floats * static_cast<size_t>(scratch_parts_);
  // Profiling: the first range's kernel times, and the segment's wall time (share_wall_time).
  std::vector<double> first_ns(node_ns ? s.last - s.first + 1 : 0, 0.0);
  const auto t_segment = node_ns ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  ctx.parallel_for(parts, 1, [&](int64_t p0, int64_t p1) {
    thread_local std::vector<backend::TensorArg> args;
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t r0 = std::min(rows, p * chunk), r1 = std::min(rows, r0 + chunk);
      if (r0 >= r1) continue;
      backend::RunContext one;  // each range runs alone, with its own scratch
      one.threads = 1;
      one.scratch = ctx.scratch + static_cast<size_t>(p) * scratch_floats;
      // Rows [r0, r1) of a row-carrying node: its block of them (a regional buffer's in region p),
      // and its dims with r1 - r0 rows.
      auto part = [&](uint32_t node, float* base, backend::Dims& d) -> float* {
        const int a = rows_.row_axis[node];
        d = dims[node];
        if (a < 0) return base;
        int64_t inner = 1;
        for (int k = a + 1; k < d.rank; ++k) inner *= d[k];
        d.d[a] = r1 - r0;
        if (base && plan_.regional(node)) base = regions + p * plan_.region_floats + plan_.offset[node];
        return base ? base + r0 * inner : nullptr;
      };
      for (uint32_t i = s.first; i <= s.last; ++i) {
        const backend::Kernel* kernel = kernels_[i].get();
        if (!kernel) continue;
        const ir::Node& node = graph_.nodes[i];
        if (s.reduces && i == s.last) {  // the range's blocks of a row reduction
          backend::Dims d;
          const float* x = part(node.in[0], ptr(node.in[0]), d);
          const auto t0 = node_ns && p == 0 ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
          kernel->sum_row_blocks(x, r1 - r0, d.numel() / (r1 - r0), r0, blocks);
          if (node_ns && p == 0)
            first_ns[i - s.first] = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
          continue;
        }
        args.clear();
        for (size_t k = 0; k < node.in.size(); ++k) {
          backend::TensorArg arg;
          arg.data = part(node.in[k], kernel->owns_weight(k) ? nullptr : ptr(node.in[k]), arg.dims);
          args.push_back(arg);
        }
        backend::Dims out_dims;
        float* out = part(i, ptr(i), out_dims);
        if (node_ns && p == 0) {
          const auto t0 = std::chrono::steady_clock::now();
          kernel->run(one, args, out, out_dims);
          first_ns[i - s.first] = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
        } else {
          kernel->run(one, args, out, out_dims);
        }
      }
    }
  });
  if (s.reduces) {  // the blocks added up in order, on this thread
    const uint32_t src = graph_.nodes[s.last].in[0];
    kernels_[s.last]->finish_row_blocks(blocks, rows, dims[src].numel() / rows, ptr(s.last));
  }
  if (node_ns) {
    const double wall = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t_segment).count();
    std::vector<uint32_t> timed;  // the segment's kernels (aliases have none)
    std::vector<double> ns;
    for (uint32_t i = s.first; i <= s.last; ++i)
      if (kernels_[i]) timed.push_back(i), ns.push_back(first_ns[i - s.first]);
    const std::vector<double> shared = share_wall_time(ns, wall);
    for (size_t k = 0; k < timed.size(); ++k) (*node_ns)[timed[k]] += shared[k];
  }
  return true;
}

std::vector<KernelReport> Executor::kernel_reports() const {
  std::vector<KernelReport> r;
  for (uint32_t i = 0; i < graph_.nodes.size(); ++i) {
    if (!kernels_[i]) continue;
    int segment = -1;
    for (size_t k = 0; k < rows_.segments.size(); ++k)
      if (rows_.segments[k].first <= i && i <= rows_.segments[k].last) segment = static_cast<int>(k);
    r.push_back({std::string(ir::op_name(graph_.nodes[i].op)), kernels_[i]->describe(), graph_.nodes[i].shape, segment});
  }
  return r;
}

size_t Executor::arena_bytes() const { return static_cast<size_t>(plan_.workspace_floats(threads_)) * sizeof(float); }
size_t Executor::intermediate_bytes() const { return static_cast<size_t>(plan_.unshared_floats) * sizeof(float); }

size_t Executor::param_bytes() const {
  size_t bytes = 0;
  std::vector<const void*> seen;
  for (const auto& k : kernels_) {
    if (!k) continue;
    for (const backend::Kernel::HeldWeight& w : k->held_weights()) {
      if (std::find(seen.begin(), seen.end(), w.id) != seen.end()) continue;
      seen.push_back(w.id);
      bytes += w.bytes;
    }
  }
  for (uint32_t p : param_nodes_)
    if (needs_raw_[p] && param_set_[p]) bytes += param_data_[p]->size() * sizeof(float);
  return bytes;
}

std::vector<CompiledGraph::WeightBlock> Executor::weight_blocks() const {
  std::vector<CompiledGraph::WeightBlock> blocks;
  for (const auto& k : kernels_) {
    if (!k) continue;
    for (const backend::Kernel::HeldWeight& w : k->held_weights()) blocks.push_back({w.id, w.bytes});
  }
  for (uint32_t p : param_nodes_)
    if (needs_raw_[p] && param_set_[p]) blocks.push_back({param_data_[p].get(), param_data_[p]->size() * sizeof(float)});
  return blocks;
}

}  // namespace rungs::compile
