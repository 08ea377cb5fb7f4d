// SPDX-License-Identifier: Apache-2.0
// The scalar meaning of every elementwise op (eval_scalar) and the elementwise reference: per output
// element, per input index arithmetic. Device::Reference runs this; the kernel tests compare with it.
#include <cmath>
#include <vector>

#include "backends/cpu/elementwise/elementwise.hpp"
#include "backends/cpu/rows/vmath.hpp"
#include "core/check.hpp"

namespace rungs::backend::cpu {

float eval_scalar(ops::Op op, float a, float b, float c) {
  using ops::Op;
  switch (op) {
    case Op::Add: return a + b;
    case Op::Sub: return a - b;
    case Op::Mul: return a * b;
    case Op::Div: return a / b;
    case Op::Maximum: return vmath::maximum_ref(a, b);
    case Op::Minimum: return vmath::minimum_ref(a, b);
    case Op::Relu: return vmath::relu_ref(a);
    case Op::Gelu: return static_cast<float>(vmath::gelu_ref(a));
    case Op::GeluTanh: return static_cast<float>(vmath::gelu_tanh_ref(a));
    case Op::Silu: return static_cast<float>(vmath::silu_ref(a));
    case Op::Sigmoid: return static_cast<float>(vmath::sigmoid_ref(a));
    case Op::Tanh: return std::tanh(a);
    case Op::Exp: return std::exp(a);
    case Op::Log: return std::log(a);
    case Op::Sqrt: return std::sqrt(a);
    case Op::Rsqrt: return 1.f / std::sqrt(a);
    case Op::Neg: return -a;
    case Op::Abs: return std::fabs(a);
    case Op::Pow: return vmath::pow_ref(a, b);
    case Op::Equal: return a == b ? 1.f : 0.f;
    case Op::Less: return a < b ? 1.f : 0.f;
    case Op::Greater: return a > b ? 1.f : 0.f;
    case Op::LessEqual: return a <= b ? 1.f : 0.f;
    case Op::GreaterEqual: return a >= b ? 1.f : 0.f;
    case Op::Erf: return vmath::erf_ref(a);
    case Op::Sin: return vmath::sin_ref(a);
    case Op::Cos: return vmath::cos_ref(a);
    case Op::LogicalNot: return vmath::logical_not_ref(a);
    case Op::Where: return vmath::where_ref(a, b, c);
    default: internal_check(false, "eval_scalar: not an elementwise op");
  }
  return 0.f;
}

void elementwise_reference(const KernelParams& params, std::span<const TensorArg> in, float* out,
                           const Dims& out_dims) {
  const Program prog = program_of(params);
  const int rank = out_dims.rank;
  std::vector<float> regs(prog.regs);
  std::array<int64_t, ops::kMaxRank> idx{};
  const int64_t total = out_dims.numel();
  for (int64_t e = 0; e < total; ++e) {
    int64_t rest = e;
    for (int k = rank - 1; k >= 0; --k) {
      idx[k] = rest % out_dims[k];
      rest /= out_dims[k];
    }
    for (int i = 0; i < prog.inputs; ++i) {
      const Dims& d = in[i].dims;
      int64_t off = 0;
      for (int k = 0; k < d.rank; ++k) {
        const int64_t ok = idx[k + rank - d.rank];
        off = off * d[k] + (d[k] == 1 ? 0 : ok);
      }
      regs[i] = in[i].data[off];
    }
    for (const auto& ins : prog.code) {
      const float a = ins.a < 0 ? ins.imm : regs[ins.a];
      const float b = ins.b < 0 ? ins.imm : regs[ins.b];
      const float c = ins.c < 0 ? ins.imm : regs[ins.c];
      regs[ins.dst] = eval_scalar(ins.op, a, b, c);
    }
    out[e] = regs[prog.code.back().dst];
  }
}

}  // namespace rungs::backend::cpu
