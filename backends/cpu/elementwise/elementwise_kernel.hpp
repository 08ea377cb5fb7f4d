// SPDX-License-Identifier: Apache-2.0
// backends/cpu/elementwise/elementwise_kernel.hpp: the elementwise kernel over xsimd batches.
// Included only by the per-ISA translation units (elementwise_<isa>.cpp).
#pragma once

#include <string>
#include <vector>

#include "backends/cpu/elementwise/elementwise.hpp"
#include "backends/cpu/rows/arch.hpp"
#include "backends/cpu/rows/line_buffer.hpp"
#include "backends/cpu/rows/simd.hpp"
#include "backends/cpu/rows/vmath.hpp"
#include "core/check.hpp"

namespace rungs::backend::cpu {
namespace elementwise_detail {

// Floats of one row a program runs over at a time: temporaries stay in L1.
constexpr int64_t kBlock = 512;

// One operand of an instruction over a segment: a contiguous run, or one value splatted.
struct Operand {
  const float* ptr = nullptr;
  bool splat = false;
  float value = 0.f;
};

template <class A, bool SplatA, bool SplatB, class F>
void map_run(F f, const Operand& a, const Operand& b, float* dst, size_t n, bool exact_tail) {
  using B = vfloat<A>;
  constexpr size_t W = B::size;
  const B ka(a.value), kb(b.value);
  auto load = [](const Operand& o, const B& k, auto splat, size_t i) {
    if constexpr (decltype(splat)::value) return k;
    else return B::load_unaligned(o.ptr + i);
  };
  using SA = std::bool_constant<SplatA>;
  using SB = std::bool_constant<SplatB>;
  size_t i = 0;
  for (; i + W <= n; i += W) f(load(a, ka, SA{}, i), load(b, kb, SB{}, i)).store_unaligned(dst + i);
  if (i < n) {
    B r = f(load(a, ka, SA{}, i), load(b, kb, SB{}, i));
    if (exact_tail) store_tail<A>(dst + i, r, n - i);
    else r.store_unaligned(dst + i);  // temporaries have room for a whole batch
  }
}

template <class A, class F>
void map(F f, const Operand& a, const Operand& b, float* dst, size_t n, bool exact_tail) {
  if (a.splat) {
    if (b.splat) map_run<A, true, true>(f, a, b, dst, n, exact_tail);
    else map_run<A, true, false>(f, a, b, dst, n, exact_tail);
  } else {
    if (b.splat) map_run<A, false, true>(f, a, b, dst, n, exact_tail);
    else map_run<A, false, false>(f, a, b, dst, n, exact_tail);
  }
}

// dst[0, n) = where(c, a, b): three operands, each contiguous or a splat.
template <class A>
void map_where(const Operand& c, const Operand& a, const Operand& b, float* dst, size_t n, bool exact_tail) {
  using B = vfloat<A>;
  constexpr size_t W = B::size;
  const B kc(c.value), ka(a.value), kb(b.value);
  auto load = [](const Operand& o, const B& k, size_t i) { return o.splat ? k : B::load_unaligned(o.ptr + i); };
  size_t i = 0;
  for (; i + W <= n; i += W) vmath::where(load(c, kc, i), load(a, ka, i), load(b, kb, i)).store_unaligned(dst + i);
  if (i < n) {
    B r = vmath::where(load(c, kc, i), load(a, ka, i), load(b, kb, i));
    if (exact_tail) store_tail<A>(dst + i, r, n - i);
    else r.store_unaligned(dst + i);
  }
}

// dst[0, n) = op(a, b) (b ignored by unary ops; c read by where only).
template <class A>
void exec(ops::Op op, const Operand& a, const Operand& b, const Operand& c, float* dst, size_t n, bool exact_tail) {
  using B = vfloat<A>;
  using ops::Op;
  auto un = [&](auto f) { map<A>([f](const B& x, const B&) { return f(x); }, a, a, dst, n, exact_tail); };
  auto bin = [&](auto f) { map<A>(f, a, b, dst, n, exact_tail); };
  auto cmp = [&](auto f) { map<A>([f](const B& x, const B& y) { return vmath::as_float<decltype(x == y), B>(f(x, y)); }, a, b, dst, n, exact_tail); };
  switch (op) {
    case Op::Add: return bin([](const B& x, const B& y) { return x + y; });
    case Op::Sub: return bin([](const B& x, const B& y) { return x - y; });
    case Op::Mul: return bin([](const B& x, const B& y) { return x * y; });
    case Op::Div: return bin([](const B& x, const B& y) { return x / y; });
    case Op::Maximum: return bin([](const B& x, const B& y) { return vmath::maximum(x, y); });
    case Op::Minimum: return bin([](const B& x, const B& y) { return vmath::minimum(x, y); });
    case Op::Relu: return un([](const B& x) { return vmath::relu(x); });
    case Op::Gelu: return un([](const B& x) { return vmath::gelu(x); });
    case Op::GeluTanh: return un([](const B& x) { return vmath::gelu_tanh(x); });
    case Op::Silu: return un([](const B& x) { return vmath::silu(x); });
    case Op::Sigmoid: return un([](const B& x) { return vmath::sigmoid(x); });
    case Op::Tanh: return un([](const B& x) { return xsimd::tanh(x); });
    case Op::Exp: return un([](const B& x) { return xsimd::exp(x); });
    case Op::Log: return un([](const B& x) { return xsimd::log(x); });
    case Op::Sqrt: return un([](const B& x) { return xsimd::sqrt(x); });
    case Op::Rsqrt: return un([](const B& x) { return B(1.f) / xsimd::sqrt(x); });
    case Op::Neg: return un([](const B& x) { return -x; });
    case Op::Abs: return un([](const B& x) { return xsimd::abs(x); });
    case Op::Erf: return un([](const B& x) { return vmath::erf(x); });
    case Op::Sin: return un([](const B& x) { return vmath::sin(x); });
    case Op::Cos: return un([](const B& x) { return vmath::cos(x); });
    case Op::LogicalNot: return un([](const B& x) { return vmath::logical_not(x); });
    case Op::Pow:
      // The exponents exporters write, exact: x^2 = x * x (correctly rounded, as pow), x^0.5 =
      // sqrt(x) (also correctly rounded; + 0 turns sqrt(-0) into pow's +0, and pow(-inf, 0.5) is
      // +inf), x^1 = x.
      if (b.splat && b.value == 2.f) return un([](const B& x) { return x * x; });
      if (b.splat && b.value == 1.f) return un([](const B& x) { return x; });
      if (b.splat && b.value == 0.5f)
        return un([](const B& x) {
          return xsimd::select(x == B(-std::numeric_limits<float>::infinity()),
                               B(std::numeric_limits<float>::infinity()), xsimd::sqrt(x) + B(0.f));
        });
      return bin([](const B& x, const B& y) { return vmath::pow(x, y); });
    case Op::Equal: return cmp([](const B& x, const B& y) { return x == y; });
    case Op::Less: return cmp([](const B& x, const B& y) { return x < y; });
    case Op::Greater: return cmp([](const B& x, const B& y) { return x > y; });
    case Op::LessEqual: return cmp([](const B& x, const B& y) { return x <= y; });
    case Op::GreaterEqual: return cmp([](const B& x, const B& y) { return x >= y; });
    case Op::Where: return map_where<A>(a, b, c, dst, n, exact_tail);
    default: internal_check(false, "elementwise kernel: op outside its family");
  }
}

template <class A>
class ElementwiseKernel final : public Kernel {
 public:
  ElementwiseKernel(Program prog, std::string name) : prog_(std::move(prog)), name_(std::move(name)) {}

  void run(const RunContext& ctx, std::span<const TensorArg> in, float* out,
           const Dims& out_dims) const override {
    // The thread's own (no heap call per run). The parts below read this thread's plan through a
    // reference: named in the lambda, a thread_local would be each worker's own.
    thread_local std::vector<Dims> dims;
    thread_local BroadcastPlan this_threads_plan;
    dims.resize(in.size());
    for (size_t i = 0; i < in.size(); ++i) dims[i] = in[i].dims;
    plan_broadcast(dims, out_dims, this_threads_plan);
    const BroadcastPlan& plan = this_threads_plan;
    if (plan.rows * plan.inner == 0) return;
    const int64_t blocks = (plan.inner + kBlock - 1) / kBlock;
    const int64_t seg = std::min(plan.inner, kBlock);
    ctx.parallel_for(plan.rows * blocks, grain_for(seg * (prog_.inputs + 1)), [&](int64_t u0, int64_t u1) {
      // The thread's buffers, on lines of their own (line_buffer.hpp): the other parts write
      // theirs meanwhile.
      float* temps = thread_lines<float, TempsUse>(static_cast<size_t>(prog_.regs) * kBlock);
      Operand* regs = thread_lines<Operand, RegsUse>(static_cast<size_t>(prog_.regs));
      RowCursor cursor(plan, std::span<int64_t>(thread_lines<int64_t, OffsetsUse>(in.size()), in.size()));
      cursor.seek(u0 / blocks);
      for (int64_t u = u0; u < u1; ++u) {
        const int64_t row = u / blocks, j0 = (u % blocks) * kBlock;
        if (row != cursor.row()) cursor.next();
        const auto n = static_cast<size_t>(std::min(kBlock, plan.inner - j0));
        for (int i = 0; i < prog_.inputs; ++i) {
          const float* base = in[i].data + cursor.offset(i);
          regs[i] = plan.in_contiguous[i] ? Operand{base + j0, false, 0.f} : Operand{base, true, *base};
        }
        run_segment(regs, temps, out + row * plan.inner + j0, n);
      }
    });
  }

  std::string describe() const override { return name_ + "[" + arch_label<A>() + "]"; }

 private:
  struct TempsUse;  // thread_lines' tags
  struct RegsUse;
  struct OffsetsUse;

  void run_segment(Operand* regs, float* temps, float* out, size_t n) const {
    const size_t last = prog_.code.size() - 1;
    for (size_t k = 0; k <= last; ++k) {
      const ops::Instr& ins = prog_.code[k];
      const Operand a = ins.a < 0 ? Operand{nullptr, true, ins.imm} : regs[ins.a];
      const Operand b = ins.b < 0 ? Operand{nullptr, true, ins.imm} : regs[ins.b];
      const Operand c = ins.c < 0 ? Operand{nullptr, true, ins.imm} : regs[ins.c];
      float* dst = k == last ? out : temps + static_cast<size_t>(ins.dst) * kBlock;
      exec<A>(ins.op, a, b, c, dst, n, k == last);
      regs[ins.dst] = Operand{dst, false, 0.f};
    }
  }

  Program prog_;
  std::string name_;
};

}  // namespace elementwise_detail

template <class Arch>
std::unique_ptr<Kernel> make_elementwise_for(const KernelParams& params) {
  Program prog = program_of(params);
  internal_check(!prog.code.empty(), "elementwise kernel: empty program");
  std::string name = params.op == ops::Op::FusedElementwise
                         ? "fused_elementwise(" + std::to_string(prog.code.size()) + " ops)"
                         : "elementwise:" + std::string(ops::op_name(params.op));
  return std::make_unique<elementwise_detail::ElementwiseKernel<Arch>>(std::move(prog), std::move(name));
}

}  // namespace rungs::backend::cpu
