// SPDX-License-Identifier: Apache-2.0
// backends/cpu/gemm/gemm_kernel.cpp: the Kernel for Op::MatMul and Op::FusedMatMul.
//
// Compile time (the factory and set_weight): shapes, blocking, epilogue, and B packed once when it
// is a Param (in the policy's format, shared across graphs) or a Constant. Run time: the rows the
// dims give (active extent may shorten them), split into (batch, row block, panel chunk) tasks
// across the thread pool; B that is an activation (attention-style batched matmul) is packed into
// the run's scratch first.
#include <algorithm>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "backends/cpu/cache_sizes.hpp"
#include "backends/cpu/families.hpp"
#include "backends/cpu/gemm/gemm.hpp"
#include "backends/cpu/gemm/pack.hpp"
#include "core/check.hpp"

namespace rungs::backend::cpu {
namespace gemm {

const IsaGemm* isa_gemm(Isa isa) {
  switch (isa) {
#if defined(__EMSCRIPTEN__)
    case Isa::Wasm: {
      static const IsaGemm g = isa_gemm_wasm();
      return &g;
    }
#else
    case Isa::Sse42: {
      static const IsaGemm g = isa_gemm_sse42();
      return &g;
    }
    case Isa::Avx2: {
      static const IsaGemm g = isa_gemm_avx2();
      return &g;
    }
    case Isa::Avx512: {
      static const IsaGemm g = isa_gemm_avx512();
      return &g;
    }
#endif
    default: return nullptr;
  }
}

namespace {

// Cache budgets, from the core's cache sizes (cache_sizes.hpp). One panel's K block (kc x nr) is
// reused by every row tile (panel_block_bytes). The C block of a group of panels
// (rows x group x nr) stays in half of L2 while the K blocks pass over it, instead of C making a
// round trip to L3 for every K block when N is large (a fraction that gives the 256 KB tuned on a
// 32 KB L1 / 512 KB L2 EPYC). The rows' A block (mc x kc, a_block_bytes) stays in L2 while the
// panels pass.
int64_t c_budget() { return cache_sizes().l2 / 2; }
// Below this many flops per extra thread a product runs on fewer threads (product_threads). In
// wasm 2 MFLOP left the encoder's 16- and 32-row projections on one thread: its 2,000-request
// trace ran 1.59x faster on two threads than on one, 1.70x with 250 kFLOP in two runs (1.67x
// and 1.72x with 500 k), and 1.37x-1.40x onnxruntime-web on two threads, from 1.23x.
#if defined(__EMSCRIPTEN__)
constexpr int64_t kFlopsPerThread = 250'000;
#else
constexpr int64_t kFlopsPerThread = 2'000'000;
#endif

}  // namespace

int64_t product_threads(int64_t flops, int64_t threads) {
  return std::max<int64_t>(1, std::min<int64_t>(threads, 1 + flops / kFlopsPerThread));
}

TaskSplit split_tasks(int64_t batches, int64_t m, int64_t panels, int64_t threads, int64_t mc, int64_t mr) {
  TaskSplit s{std::max<int64_t>(1, std::min(mc, m)), panels};
  const int64_t row_tiles = (m + mr - 1) / mr;
  int64_t row_blocks = (m + s.mc - 1) / s.mc;
  if (threads > 1 && row_blocks > 1) {
    // Row blocks of even size: the cache budget alone cut M = 512 into 510 rows and 2 at K = 768
    // on avx2, and two threads ran no faster than one.
    s.mc = std::min(s.mc, (row_tiles + row_blocks - 1) / row_blocks * mr);
    row_blocks = (m + s.mc - 1) / s.mc;
  }
  const int64_t tasks = batches * row_blocks;
  if (threads <= 1 || tasks >= 4 * threads || tasks % threads == 0) return s;
  // Each batch in `per` tasks, per >= row_blocks, so that batches * per is a multiple of threads.
  const int64_t unit = threads / std::gcd(batches, threads);
  const int64_t per = (row_blocks + unit - 1) / unit * unit;
  if (row_tiles >= panels && row_tiles >= per) {
    // Rows: the larger side, and the one the graph's other kernels split too (layer norms,
    // attention, elementwise ops hand each thread a range of rows), so the rows a thread writes
    // here are the rows it reads in the next kernel, from its own cache.
    s.mc = (row_tiles + per - 1) / per * mr;
  } else {
    const int64_t want = (per + row_blocks - 1) / row_blocks;  // panel chunks per row block
    s.pchunk = (panels + want - 1) / want;
    const int64_t chunks = (panels + s.pchunk - 1) / s.pchunk;
    if (row_blocks * chunks < per && row_tiles > row_blocks) {  // too few panels: rows as well
      const int64_t rows = std::min(row_tiles, (per + chunks - 1) / chunks);
      s.mc = std::min(s.mc, (row_tiles + rows - 1) / rows * mr);
    }
  }
  return s;
}

TaskSplit balance_tasks(TaskSplit s, int64_t batches, int64_t m, int64_t panels, int64_t threads, int64_t flops,
                        int64_t mr) {
  if (threads <= 1 || m <= 0) return s;
  const int64_t row_blocks = (m + s.mc - 1) / s.mc;
  int64_t chunks = (panels + s.pchunk - 1) / s.pchunk;
  const int64_t want = std::min(kBalanceTasks * threads, flops / kBalanceFlops);
  if (batches * row_blocks * chunks >= want) return s;
  // Panels first: a task's rows of A are read from L2 once per panel whatever the chunk, while
  // fewer rows per task would reload each panel's K block into L1 for fewer row tiles (rows cut
  // to 36 ran the 2-thread 256^3 on avx512 at 314-380 GFLOP/s against 355-401 uncut).
  const int64_t per_chunks = (want + batches * row_blocks - 1) / (batches * row_blocks);
  s.pchunk = std::min(s.pchunk, std::max<int64_t>(1, (panels + per_chunks - 1) / per_chunks));
  chunks = (panels + s.pchunk - 1) / s.pchunk;
  if (batches * row_blocks * chunks >= want) return s;
  const int64_t row_tiles = (m + mr - 1) / mr;
  const int64_t per = (want + batches * chunks - 1) / (batches * chunks);  // row blocks per batch and chunk
  s.mc = std::min(s.mc, std::max<int64_t>(1, (row_tiles + per - 1) / per) * mr);
  return s;
}

int64_t panel_block_bytes(const CacheSizes& caches, int64_t nr) {
  const int64_t in_l1 = caches.l1d * 3 / 4;
#if !defined(__EMSCRIPTEN__)
  if (in_l1 / (nr * 4) >= kMinL1PanelK) return in_l1;
#endif
  (void)nr;
  return std::min(2 * caches.l1d, caches.l2 / 8);
}

int64_t a_block_bytes(const CacheSizes& caches, int64_t kblocks, bool panel_streams) {
#if defined(__EMSCRIPTEN__)
  panel_streams = false;  // wasm's blocking was tuned with three quarters; its caches are not visible
#endif
  return kblocks > 1 || panel_streams ? caches.l2 / 4 : caches.l2 * 3 / 4;
}

Blocking choose_blocking(int64_t k, const IsaGemm& g, Format f) { return choose_blocking(k, g, f, cache_sizes()); }

Blocking choose_blocking(int64_t k, const IsaGemm& g, Format f, const CacheSizes& caches) {
  const int64_t step = format_k_step(f);
  int64_t kc = std::max<int64_t>(panel_block_bytes(caches, g.nr) / (g.nr * format_bytes(f)), 16);
  const int64_t kblocks = std::max<int64_t>(1, (k + kc - 1) / kc);
  kc = (k + kblocks - 1) / kblocks;  // even blocks
  kc = std::max<int64_t>(step, (kc + step - 1) / step * step);
  const bool panel_streams = kc * g.nr * format_bytes(f) > caches.l1d;
  const int64_t mc = std::max<int64_t>(g.mr, a_block_bytes(caches, kblocks, panel_streams) / (kc * 4) / g.mr * g.mr);
  return {kc, mc};
}

namespace {

Format format_of(PrecisionPolicy policy) {
  switch (policy.weights) {
    case PrecisionPolicy::Format::BF16: return Format::BF16;
    case PrecisionPolicy::Format::F16: return Format::F16;
    default: return Format::F32;
  }
}

std::string_view act_suffix(Activation act) {
  switch (act) {
    case Activation::None: return "";
    case Activation::Relu: return "+relu";
    case Activation::Gelu: return "+gelu";
    case Activation::GeluTanh: return "+gelu_tanh";
    case Activation::Silu: return "+silu";
    case Activation::Tanh: return "+tanh";
    case Activation::Sigmoid: return "+sigmoid";
  }
  return "";
}

int64_t product(const int64_t* d, int n) {
  int64_t p = 1;
  for (int i = 0; i < n; ++i) p *= d[i];
  return p;
}

// Maps an output batch index to the (broadcast) batch indices of a and b.
struct BatchMap {
  int rank = 0;  // output batch rank
  int64_t out[ops::kMaxRank]{};
  int64_t a_stride[ops::kMaxRank]{};  // 0 where a broadcasts
  int64_t b_stride[ops::kMaxRank]{};

  static void strides(const int64_t* dims, int rank, int out_rank, int64_t* stride) {
    int64_t s = 1;
    for (int j = out_rank - 1; j >= 0; --j) {
      const int i = j - (out_rank - rank);
      const int64_t d = i >= 0 ? dims[i] : 1;
      stride[j] = d == 1 ? 0 : s;
      s *= d;
    }
  }
  BatchMap(const Dims& out_dims, const int64_t* a_dims, int a_rank, const int64_t* b_dims, int b_rank)
      : rank(out_dims.rank - 2) {
    for (int j = 0; j < rank; ++j) out[j] = out_dims[j];
    strides(a_dims, a_rank, rank, a_stride);
    strides(b_dims, b_rank, rank, b_stride);
  }
  int64_t count() const { return product(out, rank); }
  void map(int64_t t, int64_t& a, int64_t& b) const {
    a = b = 0;
    for (int j = rank - 1; j >= 0; --j) {
      const int64_t i = t % out[j];
      t /= out[j];
      a += i * a_stride[j];
      b += i * b_stride[j];
    }
  }
};

class GemmKernel final : public Kernel {
 public:
  static std::unique_ptr<Kernel> create(const KernelParams& params, Isa isa);

  void run(const RunContext& ctx, std::span<const TensorArg> in, float* out,
           const Dims& out_dims) const override;
  size_t scratch_floats() const override {
    const Part& p = parts_[0];
    return p.packed || p.param ? 0 : static_cast<size_t>(b_batches_ * p.layout.words());
  }
  bool owns_weight(size_t i) const override { return i >= 1 && i <= parts_.size() && parts_[i - 1].param; }
  void set_weight(size_t i, std::span<const float> data) override;
  // The packed params (a packed Constant is the kernel's own business, not a param's storage).
  std::vector<HeldWeight> held_weights() const override {
    std::vector<HeldWeight> w;
    for (const Part& p : parts_)
      if (p.param && p.packed) w.push_back({p.packed.get(), p.packed->bytes()});
    return w;
  }
  std::string describe() const override { return name_; }

 private:
  // B, or one of the weights side by side that make it (Epilogue::b_parts): its columns of the
  // output and its own packed panels, numbered after the previous parts' panels when the run
  // splits panels among tasks.
  struct Part {
    int64_t n = 0, col = 0;  // width, first output column
    int64_t panel0 = 0;      // first panel in the run's numbering
    bool param = false;      // a Param: packed at set_weight
    int bias_in = -1;
    PackLayout layout;
    std::shared_ptr<const PackedB> packed;  // a Param's or Constant's panels
  };

  const IsaGemm* g_ = nullptr;
  Format format_ = Format::F32;  // of packed B (activations are always packed as f32)
  int res_in_ = -1;
  Activation act_ = Activation::None;
  bool flat_ = false;            // B is [K, N]: every leading dim of A is a row
  Dims b_dims_;                  // compiled (one part)
  int64_t k_ = 0, n_ = 0, b_batches_ = 1;
  Blocking blocking_{};
  std::vector<Part> parts_;
  std::string name_;
};

std::unique_ptr<Kernel> GemmKernel::create(const KernelParams& params, Isa isa) {
  if (params.op != ops::Op::MatMul && params.op != ops::Op::FusedMatMul) return nullptr;
  const IsaGemm* g = isa_gemm(isa);
  const std::vector<InputParams>& ins = params.inputs;
  const bool fused = params.op == ops::Op::FusedMatMul;
  const int parts = fused ? params.epilogue.b_parts : 1;
  if (g == nullptr || parts < 1 || ins.size() < 1 + static_cast<size_t>(parts)) return nullptr;
  const InputParams& a = ins[0];
  const Dims& out = params.out;
  if (a.dims.rank < 2 || out.rank < 2) return nullptr;
  // B transposed ([N, K]) is a param the kernel packs read transposed; it runs as B = [K, N].
  const bool b_transposed = fused && params.epilogue.b_transposed;
  const int64_t k = a.dims.last();

  auto kernel = std::make_unique<GemmKernel>();
  kernel->g_ = g;
  kernel->k_ = k;
  for (int i = 1; i <= parts; ++i) {
    const InputParams& b = ins[i];
    if (b.dims.rank < 2) return nullptr;
    // Parts are weights of one kind (all Params or all Constants), packed in one format.
    if (parts > 1 && (b.dims.rank != 2 || b.source == Source::Activation || b.source != ins[1].source)) return nullptr;
    if (b_transposed && (b.source != Source::Param || b.dims.rank != 2)) return nullptr;
    Part part;
    part.n = b_transposed ? b.dims[0] : b.dims.last();
    part.col = kernel->n_;
    part.param = b.source == Source::Param;
    if (b.dims[b_transposed ? 1 : b.dims.rank - 2] != k) return nullptr;
    kernel->n_ += part.n;
    kernel->parts_.push_back(std::move(part));
  }
  if (out.last() != kernel->n_) return nullptr;
  const InputParams& b = ins[1];
  kernel->b_dims_ = b_transposed ? Dims::of({k, kernel->n_}) : b.dims;
  kernel->b_batches_ = product(kernel->b_dims_.d.data(), kernel->b_dims_.rank - 2);
  kernel->flat_ = b.dims.rank == 2;
  if (fused) {
    const ops::Epilogue& epi = params.epilogue;
    kernel->act_ = epi.act;
    size_t next = 1 + static_cast<size_t>(parts);
    if (epi.bias) {
      for (Part& part : kernel->parts_) {
        if (ins.size() <= next || ins[next].dims.numel() != part.n) return nullptr;
        part.bias_in = static_cast<int>(next++);
      }
    }
    if (epi.residual) {
      if (ins.size() <= next || !(ins.back().dims == out)) return nullptr;
      kernel->res_in_ = static_cast<int>(ins.size() - 1);
    }
  }
  kernel->format_ = b.source == Source::Param ? format_of(params.policy) : Format::F32;
  kernel->blocking_ = choose_blocking(k, *g, kernel->format_);
  int64_t panels = 0;
  for (int i = 1; i <= parts; ++i) {
    Part& part = kernel->parts_[i - 1];
    part.layout = PackLayout{k, part.n, g->nr, kernel->format_, b_transposed};
    part.panel0 = panels;
    panels += part.layout.panels();
    if (ins[i].source == Source::Constant && ins[i].data)
      part.packed = pack_shared(*ins[i].data, part.layout, kernel->b_batches_);
  }

  const Part& first = kernel->parts_[0];
  std::string name = first.packed || first.param ? "gemm[" : "bmm[";
  name += g->name;
  name += "]";
  if (parts > 1) name += "+parts" + std::to_string(parts);
  if (first.bias_in >= 0) name += "+bias";
  name += act_suffix(kernel->act_);
  if (kernel->res_in_ >= 0) name += "+residual";
  if (kernel->format_ == Format::BF16) name += "+bf16";
  if (kernel->format_ == Format::F16) name += "+f16";
  if (b_transposed) name += "+bT";
  kernel->name_ = std::move(name);
  return kernel;
}

void GemmKernel::set_weight(size_t i, std::span<const float> data) {
  internal_check(owns_weight(i), "gemm: set_weight on an input the kernel does not own");
  Part& part = parts_[i - 1];
  internal_check(static_cast<int64_t>(data.size()) == b_batches_ * k_ * part.n,
                 "gemm: set_weight with the wrong number of values");
  part.packed = pack_shared(data, part.layout, b_batches_);
}

void GemmKernel::run(const RunContext& ctx, std::span<const TensorArg> in, float* out,
                     const Dims& out_dims) const {
  const Dims& ad = in[0].dims;
  internal_check(ad.last() == k_ && out_dims.last() == n_, "gemm: runtime K or N differs from compile time");
  const Part& first = parts_[0];
  const Dims& bd = first.packed ? b_dims_ : in[1].dims;
  const int64_t m = flat_ ? ad.rows() : ad[ad.rank - 2];
  const BatchMap batches = flat_ ? BatchMap(Dims::of({m, n_}), nullptr, 0, nullptr, 0)
                                 : BatchMap(out_dims, ad.d.data(), ad.rank - 2, bd.d.data(), bd.rank - 2);
  const int64_t t_count = batches.count();
  if (m == 0 || n_ == 0 || t_count == 0) return;

  // B panels for each of its batches: packed at set_weight (or compile time), or now into scratch
  // (one part: an activation).
  const uint32_t* scratch_words = nullptr;
  for (const Part& part : parts_) internal_check(part.packed || !part.param, "gemm: weight used before set_weight");
  if (!first.packed) {
    internal_check(ctx.scratch != nullptr, "gemm: batched matmul needs scratch");
    auto* scratch = reinterpret_cast<uint32_t*>(ctx.scratch);
    const int64_t bt = product(bd.d.data(), bd.rank - 2);
    const float* src = in[1].data;
    const PackLayout layout = first.layout;
    ctx.parallel_for(bt, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) pack_b(src + i * k_ * n_, n_, layout, scratch + i * layout.words());
    });
    scratch_words = scratch;
  }

  // Tasks: batch x row block x panel chunk; enough of them for the threads the work deserves.
  const int64_t panels = parts_.back().panel0 + parts_.back().layout.panels();
  const int64_t flops = 2 * t_count * m * k_ * n_;
  const int64_t threads = product_threads(flops, ctx.threads);
  const TaskSplit split = balance_tasks(split_tasks(t_count, m, panels, threads, std::min(blocking_.mc, m), g_->mr),
                                        t_count, m, panels, threads, flops, g_->mr);
  const int64_t mc = split.mc, pchunk = split.pchunk;
  const int64_t row_blocks = (m + mc - 1) / mc, chunks = (panels + pchunk - 1) / pchunk;

  Problem base;
  base.lda = k_;
  base.panel_words = first.layout.panel_words();  // the same for every part (K, panel width, format)
  base.k = k_;
  base.kc = blocking_.kc;
  base.group_panels = std::max<int64_t>(1, c_budget() / (mc * g_->nr * 4));
  base.ldc = n_;
  base.ldr = n_;
  base.act = act_;
  const float* a = in[0].data;
  const float* res = res_in_ >= 0 ? in[res_in_].data : nullptr;
  const BlockFn block = g_->block[static_cast<int>(format_)];
  const int64_t a_batch = m * k_, c_batch = m * n_, b_batch = first.layout.words();
  const int64_t per_t = row_blocks * chunks;

  RunContext limited = ctx;
  limited.threads = static_cast<int>(threads);
  limited.parallel_tasks(t_count * per_t, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t t = task / per_t, r = task % per_t / chunks, q = task % chunks;
      int64_t ai = 0, bi = 0;
      batches.map(t, ai, bi);
      const int64_t m0 = r * mc, p0 = q * pchunk, p1 = std::min(panels, p0 + pchunk);
      for (const Part& part : parts_) {  // the parts whose panels the chunk covers
        const int64_t lo = std::max(p0, part.panel0), hi = std::min(p1, part.panel0 + part.layout.panels());
        if (lo >= hi) continue;
        Problem pr = base;
        pr.a = a + ai * a_batch;
        pr.b = (part.packed ? part.packed->batch(0) : scratch_words) + bi * b_batch;
        pr.n = part.n;
        pr.c = out + t * c_batch + part.col;
        pr.bias = part.bias_in >= 0 ? in[part.bias_in].data : nullptr;
        pr.residual = res ? res + t * c_batch + part.col : nullptr;
        block(pr, m0, std::min(m, m0 + mc), lo - part.panel0, hi - part.panel0);
      }
    }
  });
}

}  // namespace
}  // namespace gemm

std::unique_ptr<Kernel> make_gemm_kernel(const KernelParams& params, Isa isa) {
  return gemm::GemmKernel::create(params, isa);
}

}  // namespace rungs::backend::cpu
