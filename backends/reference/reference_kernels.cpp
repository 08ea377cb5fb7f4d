// SPDX-License-Identifier: Apache-2.0
// backends/reference/reference_kernels.cpp: plain scalar loops for every op of the IR, fused ones
// included. This is Device::Reference, the oracle the vector kernels and the passes are tested
// against: written for obviousness, not speed.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "backends/kernel.hpp"
#include "backends/reference/scalar_ops.hpp"
#include "core/check.hpp"

namespace rungs::backend {

namespace {

using ir::Node;
using ir::Op;

// Element strides of `in` viewed as broadcast to `out` (dims aligned from the right; 0 where the
// input has a 1 that broadcasts).
std::array<int64_t, ir::kMaxRank> broadcast_strides(const Dims& in, const Dims& out) {
  std::array<int64_t, ir::kMaxRank> st{};
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
  std::vector<std::array<int64_t, ir::kMaxRank>> st(n_in);
  for (size_t k = 0; k < n_in; ++k) st[k] = broadcast_strides(ins[k].dims, out);
  std::array<int64_t, ir::kMaxRank> idx{};
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

void matmul(const TensorArg& a, const TensorArg& b, float* out, const Dims& od) {
  const int r = od.rank;
  const int64_t M = od[r - 2], N = od[r - 1], K = a.dims[a.dims.rank - 1];
  Dims batch;
  batch.rank = r - 2;
  for (int i = 0; i < r - 2; ++i) batch[i] = od[i];
  auto batch_of = [](const Dims& d) {
    Dims x;
    x.rank = d.rank - 2;
    for (int i = 0; i < x.rank; ++i) x[i] = d[i];
    return x;
  };
  Dims ab = batch_of(a.dims), bb = batch_of(b.dims);
  TensorArg ba{nullptr, ab}, bbt{nullptr, bb};
  TensorArg both[2] = {ba, bbt};
  for_each_broadcast(batch, both, [&](int64_t e, const std::vector<int64_t>& off) {
    const float* A = a.data + off[0] * M * K;
    const float* B = b.data + off[1] * K * N;
    float* C = out + e * M * N;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        float acc = 0.f;
        for (int64_t k = 0; k < K; ++k) acc += A[i * K + k] * B[k * N + j];
        C[i * N + j] = acc;
      }
  });
}

void norm_rows(Op kind, const float* x, const float* gamma, const float* beta, float eps, float* out, int64_t rows,
               int64_t d) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * d;
    float* o = out + r * d;
    if (kind == Op::LayerNorm) {
      double mean = 0;
      for (int64_t i = 0; i < d; ++i) mean += xr[i];
      mean /= static_cast<double>(d);
      double var = 0;
      for (int64_t i = 0; i < d; ++i) var += (xr[i] - mean) * (xr[i] - mean);
      var /= static_cast<double>(d);
      float inv = static_cast<float>(1.0 / std::sqrt(var + eps));
      for (int64_t i = 0; i < d; ++i)
        o[i] = static_cast<float>(xr[i] - mean) * inv * gamma[i] + (beta ? beta[i] : 0.f);
    } else {
      double ms = 0;
      for (int64_t i = 0; i < d; ++i) ms += static_cast<double>(xr[i]) * xr[i];
      ms /= static_cast<double>(d);
      float inv = static_cast<float>(1.0 / std::sqrt(ms + eps));
      for (int64_t i = 0; i < d; ++i) o[i] = xr[i] * inv * gamma[i];
    }
  }
}

void attention(const Node& n, std::span<const TensorArg> in, float* out) {
  const TensorArg &q = in[0], &k = in[1], &v = in[2];
  const int64_t B = q.dims[0], Sq = q.dims[1], Sk = k.dims[1], W = q.dims[2], Wv = v.dims[2];
  const int64_t H = n.heads, D = W / H, Dv = Wv / H;
  const float scale = n.scale ? *n.scale : 1.f / std::sqrt(static_cast<float>(D));
  const float* mask = n.has_mask ? in[3].data : nullptr;
  std::vector<float> p(static_cast<size_t>(Sk));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < Sq; ++i) {
        const float* qi = q.data + (b * Sq + i) * W + h * D;
        float m = -std::numeric_limits<float>::infinity();
        bool any = false;
        for (int64_t j = 0; j < Sk; ++j) {
          bool keep = (!n.causal || j <= i + (Sk - Sq)) && (!mask || mask[b * Sk + j] >= 0.5f);
          if (!keep) {
            p[j] = -std::numeric_limits<float>::infinity();
            continue;
          }
          const float* kj = k.data + (b * Sk + j) * W + h * D;
          float s = 0.f;
          for (int64_t t = 0; t < D; ++t) s += qi[t] * kj[t];
          p[j] = s * scale;
          m = std::max(m, p[j]);
          any = true;
        }
        float* o = out + (b * Sq + i) * Wv + h * Dv;
        for (int64_t t = 0; t < Dv; ++t) o[t] = 0.f;
        if (!any) continue;
        float denom = 0.f;
        for (int64_t j = 0; j < Sk; ++j) {
          p[j] = std::isinf(p[j]) && p[j] < 0 ? 0.f : std::exp(p[j] - m);
          denom += p[j];
        }
        for (int64_t j = 0; j < Sk; ++j) {
          if (p[j] == 0.f) continue;
          const float* vj = v.data + (b * Sk + j) * Wv + h * Dv;
          float w = p[j] / denom;
          for (int64_t t = 0; t < Dv; ++t) o[t] += w * vj[t];
        }
      }
}

class ReferenceKernel final : public Kernel {
 public:
  explicit ReferenceKernel(const KernelSpec& spec) : node_(spec.graph->nodes[spec.node]) {}

  std::string describe() const override { return std::string(ir::op_name(node_.op)) + "[reference]"; }

  void run(const RunContext&, std::span<const TensorArg> in, float* out, const Dims& od) const override {
    const Node& n = node_;
    switch (n.op) {
      case Op::MatMul:
        matmul(in[0], in[1], out, od);
        return;
      case Op::FusedMatMul: {
        matmul(in[0], in[1], out, od);
        const int64_t N = od.last(), total = od.numel();
        const float* bias = n.epi.bias ? in[2].data : nullptr;
        const float* res = n.epi.residual ? in[in.size() - 1].data : nullptr;
        for (int64_t e = 0; e < total; ++e) {
          float x = out[e] + (bias ? bias[e % N] : 0.f);
          x = ref::activate(n.epi.act, x);
          out[e] = x + (res ? res[e] : 0.f);
        }
        return;
      }
      case Op::FusedElementwise: {
        std::vector<float> regs(static_cast<size_t>(std::max<int>(n.regs, 1)));
        for_each_broadcast(od, in, [&](int64_t e, const std::vector<int64_t>& off) {
          for (size_t k = 0; k < in.size(); ++k) regs[k] = in[k].data[off[k]];
          for (const ir::Instr& ins : n.prog) {
            float a = ins.a < 0 ? ins.imm : regs[ins.a];
            if (ir::is_binary(ins.op)) {
              float b = ins.b < 0 ? ins.imm : regs[ins.b];
              regs[ins.dst] = ref::binary(ins.op, a, b);
            } else {
              regs[ins.dst] = ref::unary(ins.op, a);
            }
          }
          out[e] = regs[n.prog.back().dst];
        });
        return;
      }
      case Op::Softmax: {
        const int axis = static_cast<int>(n.ints[0]);
        int64_t outer = 1, len = od[axis], inner = 1;
        for (int i = 0; i < axis; ++i) outer *= od[i];
        for (int i = axis + 1; i < od.rank; ++i) inner *= od[i];
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t i = 0; i < inner; ++i) {
            const float* x = in[0].data + o * len * inner + i;
            float* y = out + o * len * inner + i;
            float m = -std::numeric_limits<float>::infinity();
            for (int64_t j = 0; j < len; ++j) m = std::max(m, x[j * inner]);
            float s = 0.f;
            for (int64_t j = 0; j < len; ++j) s += (y[j * inner] = std::exp(x[j * inner] - m));
            for (int64_t j = 0; j < len; ++j) y[j * inner] /= s;
          }
        return;
      }
      case Op::LayerNorm:
      case Op::RmsNorm:
        norm_rows(n.op, in[0].data, in[1].data, n.op == Op::LayerNorm ? in[2].data : nullptr, n.eps, out, od.rows(),
                  od.last());
        return;
      case Op::FusedAddNorm: {
        const int64_t total = od.numel();
        std::vector<float> sum(static_cast<size_t>(total));
        for (int64_t e = 0; e < total; ++e) sum[e] = in[0].data[e] + in[1].data[e];
        norm_rows(n.norm, sum.data(), in[2].data, n.norm == Op::LayerNorm ? in[3].data : nullptr, n.eps, out,
                  od.rows(), od.last());
        return;
      }
      case Op::ReduceSum:
      case Op::ReduceMean:
      case Op::ReduceMax: {
        const Dims& id = in[0].dims;
        // Output strides over the input's axes (0 on reduced axes).
        std::array<int64_t, ir::kMaxRank> ost{};
        int64_t s = 1, count = 1;
        for (int i = id.rank - 1; i >= 0; --i) {
          bool reduced = std::find(n.ints.begin(), n.ints.end(), i) != n.ints.end();
          if (reduced) {
            count *= id[i];
          } else {
            ost[i] = s;
            s *= id[i];
          }
        }
        const int64_t total_out = od.numel();
        const float init = n.op == Op::ReduceMax ? -std::numeric_limits<float>::infinity() : 0.f;
        std::fill(out, out + total_out, init);
        std::array<int64_t, ir::kMaxRank> idx{};
        int64_t o = 0;
        const int64_t total_in = id.numel();
        for (int64_t e = 0; e < total_in; ++e) {
          float x = in[0].data[e];
          out[o] = n.op == Op::ReduceMax ? (x > out[o] || x != x ? x : out[o]) : out[o] + x;
          for (int d = id.rank - 1; d >= 0; --d) {
            ++idx[d];
            o += ost[d];
            if (idx[d] < id[d]) break;
            o -= ost[d] * id[d];
            idx[d] = 0;
          }
        }
        if (n.op == Op::ReduceMean)
          for (int64_t e = 0; e < total_out; ++e) out[e] /= static_cast<float>(count);
        return;
      }
      case Op::Reshape:
        std::copy(in[0].data, in[0].data + od.numel(), out);
        return;
      case Op::Transpose: {
        const Dims& id = in[0].dims;
        std::array<int64_t, ir::kMaxRank> ist{};
        int64_t s = 1;
        for (int i = id.rank - 1; i >= 0; --i) {
          ist[i] = s;
          s *= id[i];
        }
        std::array<int64_t, ir::kMaxRank> st{};  // input stride of each output axis
        for (int i = 0; i < od.rank; ++i) st[i] = ist[n.ints[i]];
        std::array<int64_t, ir::kMaxRank> idx{};
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
        const int axis = static_cast<int>(n.ints[0]);
        const int64_t start = n.ints[1], len = n.ints[2];
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
        const int axis = static_cast<int>(n.ints[0]);
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
      case Op::Gather: {
        const int64_t V = in[0].dims[0], D = in[0].dims[1], count = in[1].dims.numel();
        for (int64_t i = 0; i < count; ++i) {
          float id = in[1].data[i];
          float r = std::nearbyint(id);
          float* o = out + i * D;
          if (!(r >= 0.f && r < static_cast<float>(V))) {  // NaN and out-of-range ids give zeros
            std::fill(o, o + D, 0.f);
            continue;
          }
          const float* row = in[0].data + static_cast<int64_t>(r) * D;
          std::copy(row, row + D, o);
        }
        return;
      }
      case Op::Attention:
        attention(n, in, out);
        return;
      default:
        break;
    }
    if (ir::is_elementwise(n.op)) {
      const bool bin = ir::is_binary(n.op);
      for_each_broadcast(od, in, [&](int64_t e, const std::vector<int64_t>& off) {
        float a = in[0].data[off[0]];
        out[e] = bin ? ref::binary(n.op, a, in[1].data[off[1]]) : ref::unary(n.op, a);
      });
      return;
    }
    internal_check(false, "reference backend: op has no kernel");
  }

 private:
  Node node_;
};

}  // namespace

std::unique_ptr<Kernel> make_reference_kernel(const KernelSpec& spec) {
  const Node& n = spec.graph->nodes[spec.node];
  internal_check(n.op != Op::Input && n.op != Op::Param && n.op != Op::Constant,
                 "make_reference_kernel called on a leaf");
  return std::make_unique<ReferenceKernel>(spec);
}

}  // namespace rungs::backend
