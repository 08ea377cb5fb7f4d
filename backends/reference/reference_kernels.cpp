// SPDX-License-Identifier: Apache-2.0
// backends/reference/reference_kernels.cpp: Device::Reference, the oracle the vector kernels and
// the passes are tested against. Every op with arithmetic runs its family's scalar reference
// (backends/cpu/<family>/*_ref.cpp, the same function that family's kernel test compares with), so
// each op has exactly one scalar meaning; this file adds only batching and the data-movement ops
// (reshape, transpose, slice, concat), which have no arithmetic. Written for obviousness, not speed.
#include <algorithm>
#include <vector>

#include "backends/cpu/attention/attention.hpp"
#include "backends/cpu/elementwise/elementwise.hpp"
#include "backends/cpu/gather/gather.hpp"
#include "backends/cpu/gemm/reference.hpp"
#include "backends/cpu/norm/norm.hpp"
#include "backends/cpu/reduce/reduce.hpp"
#include "backends/cpu/softmax/softmax.hpp"
#include "backends/kernel.hpp"
#include "core/check.hpp"

namespace rungs::backend {

namespace {

using ops::Op;

// Element strides of `in` viewed as broadcast to `out` (dims aligned from the right; 0 where the
// input has a 1 that broadcasts).
std::array<int64_t, ops::kMaxRank> broadcast_strides(const Dims& in, const Dims& out) {
  std::array<int64_t, ops::kMaxRank> st{};
  int64_t s = 1;
  for (int i = in.rank - 1; i >= 0; --i) {
    int oi = i + (out.rank - in.rank);
    st[oi] = (in[i] == 1 && out[oi] != 1) ? 0 : s;
    s *= in[i];
  }
  return st;
}

// Calls fn(out_index, offsets...) for every element of `out`, with each input's offset.
template <typename Fn>
void for_each_broadcast(const Dims& out, std::span<const TensorArg> ins, Fn&& fn) {
  const size_t n_in = ins.size();
  std::vector<std::array<int64_t, ops::kMaxRank>> st(n_in);
  for (size_t k = 0; k < n_in; ++k) st[k] = broadcast_strides(ins[k].dims, out);
  std::array<int64_t, ops::kMaxRank> idx{};
  std::vector<int64_t> off(n_in, 0);
  const int64_t total = out.numel();
  for (int64_t e = 0; e < total; ++e) {
    fn(e, off);
    for (int d = out.rank - 1; d >= 0; --d) {
      ++idx[d];
      for (size_t k = 0; k < n_in; ++k) off[k] += st[k][d];
      if (idx[d] < out[d]) break;
      for (size_t k = 0; k < n_in; ++k) off[k] -= st[k][d] * out[d];
      idx[d] = 0;
    }
  }
}

// [..., M, K] @ [..., K, N] with broadcast batch dims; for FusedMatMul the epilogue (bias over N,
// activation, residual of the output's shape) too, and B read as [N, K] when b_transposed.
void matmul(const KernelParams& p, std::span<const TensorArg> in, float* out, const Dims& od) {
  const TensorArg &a = in[0], &b = in[1];
  const int r = od.rank;
  const int64_t M = od[r - 2], N = od[r - 1], K = a.dims[a.dims.rank - 1];
  const bool fused = p.op == Op::FusedMatMul;
  const float* bias = fused && p.epilogue.bias ? in[2].data : nullptr;
  const float* res = fused && p.epilogue.residual ? in[in.size() - 1].data : nullptr;
  const Activation act = fused ? p.epilogue.act : Activation::None;
  const bool b_transposed = fused && p.epilogue.b_transposed;
  if (fused && p.epilogue.b_parts > 1) {  // B is rank-2 weights side by side: one product each
    const int parts = p.epilogue.b_parts;
    const int64_t rows = a.dims.numel() / K;
    std::vector<float> part_out;
    int64_t col = 0;
    for (int i = 0; i < parts; ++i) {
      const TensorArg& bi = in[1 + i];
      const int64_t n = b_transposed ? bi.dims[0] : bi.dims[1];
      const float* part_bias = p.epilogue.bias ? in[1 + parts + i].data : nullptr;
      part_out.resize(static_cast<size_t>(rows * n));
      cpu::gemm::reference_gemm(a.data, bi.data, part_out.data(), rows, K, n, part_bias, act, nullptr, b_transposed);
      for (int64_t r0 = 0; r0 < rows; ++r0)
        for (int64_t j = 0; j < n; ++j)
          out[r0 * N + col + j] = part_out[r0 * n + j] + (res ? res[r0 * N + col + j] : 0.f);
      col += n;
    }
    return;
  }
  auto batch_of = [](const Dims& d) {
    Dims x;
    x.rank = d.rank - 2;
    for (int i = 0; i < x.rank; ++i) x[i] = d[i];
    return x;
  };
  const TensorArg both[2] = {{nullptr, batch_of(a.dims)}, {nullptr, batch_of(b.dims)}};
  for_each_broadcast(batch_of(od), both, [&](int64_t e, const std::vector<int64_t>& off) {
    cpu::gemm::reference_gemm(a.data + off[0] * M * K, b.data + off[1] * K * N, out + e * M * N, M, K, N, bias, act,
                              res ? res + e * M * N : nullptr, b_transposed);
  });
}

class ReferenceKernel final : public Kernel {
 public:
  explicit ReferenceKernel(KernelParams params) : p_(std::move(params)) {}

  std::string describe() const override { return std::string(ops::op_name(p_.op)) + "[reference]"; }

  void run(const RunContext&, std::span<const TensorArg> in, float* out, const Dims& od) const override {
    const KernelParams& p = p_;
    switch (p.op) {
      case Op::MatMul:
      case Op::FusedMatMul:
        matmul(p, in, out, od);
        return;
      case Op::FusedElementwise:
        cpu::elementwise_reference(p, in, out, od);
        return;
      case Op::Softmax:
        cpu::softmax_reference(p.softmax.axis, in[0], out);
        return;
      case Op::LayerNorm:
      case Op::RmsNorm:
      case Op::FusedAddNorm:
        cpu::norm_reference(p.norm, in, out, od);
        return;
      case Op::ReduceSum:
      case Op::ReduceMean:
      case Op::ReduceMax:
        cpu::reduce_reference(p.reduce.kind, p.reduce.axes, in[0], out);
        return;
      case Op::Reshape:
        std::copy(in[0].data, in[0].data + od.numel(), out);
        return;
      case Op::Transpose: {
        const Dims& id = in[0].dims;
        std::array<int64_t, ops::kMaxRank> ist{};
        int64_t s = 1;
        for (int i = id.rank - 1; i >= 0; --i) {
          ist[i] = s;
          s *= id[i];
        }
        std::array<int64_t, ops::kMaxRank> st{};  // input stride of each output axis
        for (int i = 0; i < od.rank; ++i) st[i] = ist[p.transpose.perm[i]];
        std::array<int64_t, ops::kMaxRank> idx{};
        int64_t off = 0;
        const int64_t total = od.numel();
        for (int64_t e = 0; e < total; ++e) {
          out[e] = in[0].data[off];
          for (int d = od.rank - 1; d >= 0; --d) {
            ++idx[d];
            off += st[d];
            if (idx[d] < od[d]) break;
            off -= st[d] * od[d];
            idx[d] = 0;
          }
        }
        return;
      }
      case Op::Slice: {
        const int axis = p.slice.axis;
        // od[axis] is the compiled length, or fewer rows of a prefix slice under active extent.
        const int64_t start = p.slice.start, len = od[axis];
        const Dims& id = in[0].dims;
        int64_t outer = 1, inner = 1;
        for (int i = 0; i < axis; ++i) outer *= id[i];
        for (int i = axis + 1; i < id.rank; ++i) inner *= id[i];
        for (int64_t o = 0; o < outer; ++o)
          std::copy(in[0].data + (o * id[axis] + start) * inner, in[0].data + (o * id[axis] + start + len) * inner,
                    out + o * len * inner);
        return;
      }
      case Op::Concat: {
        const int axis = p.concat.axis;
        int64_t outer = 1, inner = 1;
        for (int i = 0; i < axis; ++i) outer *= od[i];
        for (int i = axis + 1; i < od.rank; ++i) inner *= od[i];
        int64_t at = 0;
        for (const TensorArg& t : in) {
          const int64_t len = t.dims[axis];
          for (int64_t o = 0; o < outer; ++o)
            std::copy(t.data + o * len * inner, t.data + (o + 1) * len * inner, out + (o * od[axis] + at) * inner);
          at += len;
        }
        return;
      }
      case Op::Gather:
        cpu::gather_reference(in[0], in[1], out);
        return;
      case Op::Attention:
        cpu::attention_reference(p.attention, in, out);
        return;
      default:
        break;
    }
    if (ops::is_elementwise(p.op)) {
      cpu::elementwise_reference(p, in, out, od);
      return;
    }
    internal_check(false, "reference backend: op has no kernel");
  }

 private:
  KernelParams p_;
};

}  // namespace

std::unique_ptr<Kernel> make_reference_kernel(const KernelParams& params) {
  internal_check(params.op != Op::Input && params.op != Op::Param && params.op != Op::Constant,
                 "make_reference_kernel called on a leaf");
  return std::make_unique<ReferenceKernel>(params);
}

}  // namespace rungs::backend
