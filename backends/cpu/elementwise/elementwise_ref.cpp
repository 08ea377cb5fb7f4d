// SPDX-License-Identifier: Apache-2.0
// eval_scalar (the scalar meaning of every elementwise op, core/ops_scalar.hpp) and the elementwise reference: per output
// element, per input index arithmetic. Device::Reference runs this; the kernel tests compare with it.
#include <cmath>
#include <vector>

#include "backends/cpu/elementwise/elementwise.hpp"
#include "backends/cpu/rows/vmath.hpp"
#include "core/check.hpp"
#include "core/ops_scalar.hpp"

namespace rungs::backend::cpu {

float eval_scalar(ops::Op op, float a, float b, float c) {
  const std::optional<float> v = ops::scalar::eval<float>(op, a, b, c);
  internal_check(v.has_value(), "eval_scalar: not an elementwise op");
  return *v;
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
