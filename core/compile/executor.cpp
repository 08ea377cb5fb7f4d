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
#if defined(__EMSCRIPTEN__)
constexpr double kProductFlopsPerThread = 0;
#else
constexpr double kProductFlopsPerThread = 2.5e6;
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

Executor::Executor(ir::GraphImpl graph, passes::MemoryPlan plan, Device device, PrecisionPolicy policy, int threads)
    : graph_(std::move(graph)), device_(device), policy_(policy), threads_(std::max(threads, 1)), plan_(std::move(plan)) {
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
        if (node.op == Op::MatMul || node.op == Op::FusedMatMul || node.op == Op::Attention) product_nodes_.push_back(i);
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

double product_flops(Op op, const backend::Dims& out, std::span<const backend::Dims> in) {
  if ((op == Op::MatMul || op == Op::FusedMatMul) && !in.empty() && in[0].rank > 0)
    return 2.0 * static_cast<double>(out.numel()) * static_cast<double>(in[0].last());
  if (op == Op::Attention && in.size() >= 3 && in[0].rank == 3 && in[1].rank == 3 && in[2].rank == 3)
    return 2.0 * static_cast<double>(in[0][0]) * static_cast<double>(in[0][1]) * static_cast<double>(in[1][1]) *
           static_cast<double>(in[0][2] + in[2][2]);
  return 0;
}

int Executor::run_threads(const RunDims& dims) const {
  if (threads_ <= 1 || kProductFlopsPerThread <= 0 || product_nodes_.empty()) return threads_;
  double flops = 0;
  std::array<backend::Dims, 3> in;
  for (uint32_t i : product_nodes_) {
    const ir::Node& node = graph_.nodes[i];
    const size_t n = std::min(node.in.size(), in.size());
    for (size_t k = 0; k < n; ++k) in[k] = dims[node.in[k]];
    flops += product_flops(node.op, dims[i], std::span<const backend::Dims>(in.data(), n));
  }
  const double average = flops / static_cast<double>(product_nodes_.size());
  return static_cast<int>(std::clamp<double>(1 + average / kProductFlopsPerThread, 1, threads_));
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
  try {
    ws->arena = AlignedBuffer(static_cast<size_t>(plan_.arena_floats));
    ws->scratch = AlignedBuffer(scratch_floats_);
  } catch (const std::bad_alloc&) {
    fail(ErrorCode::OutOfRange, "run: cannot allocate the workspace (arena " +
                                    std::to_string(static_cast<size_t>(plan_.arena_floats) * sizeof(float)) +
                                    " bytes + scratch " + std::to_string(scratch_floats_ * sizeof(float)) +
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

  auto ptr = [&](uint32_t node) -> float* {
    uint32_t r = plan_.root[node];
    Op op = graph_.nodes[r].op;
    if (op == Op::Param)  // kernels never write params; null when a kernel keeps its own copy
      return param_data_[r] ? const_cast<float*>(param_data_[r]->data()) : nullptr;
    if (op == Op::Constant) return const_cast<float*>(leaf_data_[r].data());
    return arena + plan_.offset[r];
  };

  for (size_t k = 0; k < input_nodes_.size(); ++k) {
    const uint32_t node = input_nodes_[k];
    fill(k, std::span<float>(ptr(node), static_cast<size_t>(dims[node].numel())));
  }

  backend::RunContext ctx;
  ctx.pool = pool_;
  ctx.threads = run_threads(dims);
  ctx.scratch = guard.ws->scratch.data();
  std::vector<backend::TensorArg> args;
  uint64_t computed = 0;
  for (uint32_t i = 0; i < graph_.nodes.size(); ++i) {
    const backend::Kernel* kernel = kernels_[i].get();
    if (!kernel) continue;
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
    computed += static_cast<uint64_t>(dims[i].numel());
  }
  elements_computed_.fetch_add(computed, std::memory_order_relaxed);

  for (size_t j = 0; j < graph_.outputs.size(); ++j) {
    const uint32_t node = graph_.outputs[j].second;
    take(j, std::span<const float>(ptr(node), static_cast<size_t>(dims[node].numel())));
  }
}

std::vector<KernelReport> Executor::kernel_reports() const {
  std::vector<KernelReport> r;
  for (uint32_t i = 0; i < graph_.nodes.size(); ++i)
    if (kernels_[i]) r.push_back({std::string(ir::op_name(graph_.nodes[i].op)), kernels_[i]->describe(), graph_.nodes[i].shape});
  return r;
}

size_t Executor::arena_bytes() const { return static_cast<size_t>(plan_.arena_floats) * sizeof(float); }
size_t Executor::intermediate_bytes() const { return static_cast<size_t>(plan_.unshared_floats) * sizeof(float); }

size_t Executor::param_bytes() const {
  size_t bytes = 0;
  std::vector<const void*> seen;
  for (const auto& k : kernels_) {
    if (!k || k->weight_bytes() == 0) continue;
    const void* id = k->shared_weight_id();
    if (id && std::find(seen.begin(), seen.end(), id) != seen.end()) continue;
    if (id) seen.push_back(id);
    bytes += k->weight_bytes();
  }
  for (uint32_t p : param_nodes_)
    if (needs_raw_[p] && param_set_[p]) bytes += param_data_[p]->size() * sizeof(float);
  return bytes;
}

std::vector<CompiledGraph::WeightBlock> Executor::weight_blocks() const {
  std::vector<CompiledGraph::WeightBlock> blocks;
  for (const auto& k : kernels_) {
    if (!k || k->weight_bytes() == 0) continue;
    const void* id = k->shared_weight_id();
    blocks.push_back({id ? id : k.get(), k->weight_bytes()});
  }
  for (uint32_t p : param_nodes_)
    if (needs_raw_[p] && param_set_[p]) blocks.push_back({param_data_[p].get(), param_data_[p]->size() * sizeof(float)});
  return blocks;
}

}  // namespace rungs::compile
