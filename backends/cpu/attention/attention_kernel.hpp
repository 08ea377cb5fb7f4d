// backends/cpu/attention/attention_kernel.hpp: the attention kernel over xsimd batches.
// Included only by the per-ISA translation units (attention_<isa>.cpp).
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "backends/cpu/attention/attention.hpp"
#include "backends/cpu/rows/arch.hpp"
#include "backends/cpu/rows/simd.hpp"
#include "backends/cpu/rows/vmath.hpp"

namespace rungs::backend::cpu {
namespace attention_detail {

constexpr int64_t kQueryBlock = 32;  // queries sharing one transposed key tile
constexpr int kScoreBatches = 4;     // keys per tile = 4 batches (64 on AVX-512): 4 accumulators

template <class A>
class AttentionKernel final : public Kernel {
  using B = vfloat<A>;
  static constexpr int64_t W = B::size;
  static constexpr int64_t kKeys = kScoreBatches * W;
  static constexpr float kNegInf = -std::numeric_limits<float>::infinity();

 public:
  explicit AttentionKernel(AttentionParams p) : p_(p) {}

  void run(const RunContext& ctx, std::span<const TensorArg> in, float* out,
           const Dims& out_dims) const override {
    (void)out_dims;
    const Dims& qd = in[0].dims;
    const int64_t batch = qd[0], sq = qd[1], sk = in[1].dims[1];
    if (batch * sq * qd[2] == 0) return;
    const int64_t dh = qd[2] / p_.heads, dv = in[2].dims[2] / p_.heads;
    const int64_t qblocks = (sq + kQueryBlock - 1) / kQueryBlock;
    const int64_t tasks = batch * p_.heads * qblocks;
    ctx.parallel_for(tasks, grain_for(kQueryBlock * sk * dh / 4), [&](int64_t t0, int64_t t1) {
      Scratch sc(dh, dv);
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t qb = t % qblocks, bh = t / qblocks;
        query_block(in, out, bh / p_.heads, bh % p_.heads, qb * kQueryBlock,
                    std::min(sq, (qb + 1) * kQueryBlock), sc);
      }
    });
  }

  std::string describe() const override {
    return std::string("attention[") + arch_label<A>() + "](heads " + std::to_string(p_.heads) +
           (p_.causal ? ", causal" : "") + (p_.has_mask ? ", masked" : "") + ")";
  }

 private:
  // Per-thread buffers for one query block.
  struct Scratch {
    int64_t dh;        // head dim of q and k
    int64_t dv, dvp;   // head dim of v (and the output), rounded up to W
    std::vector<float> kt, bias, score, qs, m, l, acc;
    Scratch(int64_t d, int64_t dvalue)
        : dh(d), dv(dvalue), dvp((dvalue + W - 1) / W * W), kt(d * kKeys), bias(kKeys), score(kKeys), qs(d + W),
          m(kQueryBlock), l(kQueryBlock), acc(kQueryBlock * dvp) {}
  };

  void query_block(std::span<const TensorArg> in, float* out, int64_t b, int64_t h, int64_t i0, int64_t i1,
                   Scratch& sc) const {
    // q and k rows are e wide (heads of dh), v and output rows ev wide (heads of dv).
    const int64_t sq = in[0].dims[1], e = in[0].dims[2], sk = in[1].dims[1], ev = in[2].dims[2];
    const int64_t dh = sc.dh, dv = sc.dv, dvp = sc.dvp;
    const float scale = p_.scale ? *p_.scale : 1.f / std::sqrt(static_cast<float>(dh));
    const float* q = in[0].data + b * sq * e + h * dh;
    const float* k = in[1].data + b * sk * e + h * dh;
    const float* v = in[2].data + b * sk * ev + h * dv;
    const float* mask = p_.has_mask ? in[3].data + b * sk : nullptr;
    const int64_t shift = sk - sq;  // causal: query i sees keys j <= i + shift
    const int64_t key_end = p_.causal ? std::clamp<int64_t>(i1 - 1 + shift + 1, 0, sk) : sk;

    std::fill(sc.m.begin(), sc.m.end(), kNegInf);
    std::fill(sc.l.begin(), sc.l.end(), 0.f);
    std::fill(sc.acc.begin(), sc.acc.end(), 0.f);
    for (int64_t k0 = 0; k0 < key_end; k0 += kKeys) {
      const int64_t kb = std::min(kKeys, key_end - k0);
      // The key tile, transposed to [dh, kKeys]; missing keys are zero and their bias -inf.
      for (int64_t d = 0; d < dh; ++d) {
        float* row = sc.kt.data() + d * kKeys;
        for (int64_t j = 0; j < kb; ++j) row[j] = k[(k0 + j) * e + d];
        std::fill(row + kb, row + kKeys, 0.f);
      }
      for (int64_t j = 0; j < kKeys; ++j)
        sc.bias[j] = j < kb && (!mask || mask[k0 + j] >= 0.5f) ? 0.f : kNegInf;

      for (int64_t i = i0; i < i1; ++i) {
        const int64_t visible = p_.causal ? std::clamp<int64_t>(i + shift - k0 + 1, 0, kb) : kb;
        if (visible == 0) continue;
        const int64_t r = i - i0;
        if (!scores(q + i * e, visible, scale, sc)) continue;  // every key of the tile dropped
        accumulate(v + k0 * ev, ev, visible, r, sc);
      }
    }
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t r = i - i0;
      const float l = sc.l[r];
      const B inv(l > 0.f ? 1.f / l : 0.f);  // all keys dropped: zeros
      float* o = out + (b * sq + i) * ev + h * dv;
      const float* acc = sc.acc.data() + r * dvp;
      int64_t d = 0;
      for (; d + W <= dv; d += W) (B::load_unaligned(acc + d) * inv).store_unaligned(o + d);
      if (d < dv) store_tail<A>(o + d, B::load_unaligned(acc + d) * inv, static_cast<size_t>(dv - d));
    }
  }

  // Scaled scores of query row `qrow` against the tile into sc.score (dropped keys -inf); returns
  // false when every key is dropped.
  bool scores(const float* qrow, int64_t visible, float scale, Scratch& sc) const {
    const int64_t dh = sc.dh;
    for (int64_t d = 0; d < dh; ++d) sc.qs[d] = qrow[d] * scale;
    // Two sets of accumulators (even and odd d) so the FMA chains are not latency-bound.
    B acc[kScoreBatches], odd[kScoreBatches];
    for (int u = 0; u < kScoreBatches; ++u) acc[u] = odd[u] = B(0.f);
    const float* kt = sc.kt.data();
    auto step = [&](int64_t d, B(&into)[kScoreBatches]) {
      const B qv(sc.qs[d]);
      for (int u = 0; u < kScoreBatches; ++u) into[u] = xsimd::fma(qv, B::load_unaligned(kt + d * kKeys + u * W), into[u]);
    };
    int64_t d = 0;
    for (; d + 1 < dh; d += 2) {
      step(d, acc);
      step(d + 1, odd);
    }
    if (d < dh) step(d, acc);
    for (int u = 0; u < kScoreBatches; ++u) acc[u] += odd[u];
    B best(kNegInf);
    for (int u = 0; u < kScoreBatches; ++u) {
      B s = acc[u] + B::load_unaligned(sc.bias.data() + u * W);
      const int64_t lanes = std::clamp<int64_t>(visible - u * W, 0, W);
      if (lanes < W) s = keep_first<A>(s, static_cast<size_t>(lanes), kNegInf);
      s.store_unaligned(sc.score.data() + u * W);
      best = vmath::maximum(best, s);
    }
    return vmath::reduce_maximum(best) != kNegInf;  // a NaN score counts as visible
  }

  // Online softmax update of query row r with the tile's scores, then acc += p * v.
  void accumulate(const float* v, int64_t e, int64_t visible, int64_t r, Scratch& sc) const {
    float* score = sc.score.data();
    B best(kNegInf);
    for (int u = 0; u < kScoreBatches; ++u) best = vmath::maximum(best, B::load_unaligned(score + u * W));
    const float m_old = sc.m[r], m_new = vmath::maximum_ref(m_old, vmath::reduce_maximum(best));
    const float corr = std::exp(m_old - m_new);  // 0 on the first visible tile (m_old = -inf)
    B sum(0.f);
    for (int u = 0; u < kScoreBatches; ++u) {
      const B p = xsimd::exp(B::load_unaligned(score + u * W) - B(m_new));
      p.store_unaligned(score + u * W);
      sum += p;
    }
    sc.m[r] = m_new;
    sc.l[r] = sc.l[r] * corr + xsimd::reduce_add(sum);
    // acc = acc * corr + sum_j p_j v_j, kScoreBatches batches of the head dim at a time held in
    // registers across the keys.
    float* acc = sc.acc.data() + r * sc.dvp;
    const B c(corr);
    for (int64_t d0 = 0; d0 < sc.dvp; d0 += kScoreBatches * W) {
      const int used = static_cast<int>(std::min<int64_t>(kScoreBatches, (sc.dvp - d0) / W));
      B a[kScoreBatches], odd[kScoreBatches];  // even and odd keys: two FMA chains
      for (int u = 0; u < kScoreBatches; ++u) {
        odd[u] = B(0.f);
        if (u < used) a[u] = B::load_unaligned(acc + d0 + u * W) * c;
      }
      auto add = [&](int64_t j, B(&into)[kScoreBatches]) {
        if (score[j] == 0.f) return;  // dropped key (or underflow): nothing to add, even if v is Inf
        const B pj(score[j]);
        const float* vrow = v + j * e + d0;
        for (int u = 0; u < kScoreBatches; ++u)
          if (u < used) into[u] = xsimd::fma(pj, B::load_unaligned(vrow + u * W), into[u]);
      };
      int64_t j = 0;
      for (; j + 1 < visible; j += 2) {
        add(j, a);
        add(j + 1, odd);
      }
      if (j < visible) add(j, a);
      for (int u = 0; u < used; ++u) a[u] += odd[u];
      for (int u = 0; u < used; ++u) a[u].store_unaligned(acc + d0 + u * W);
    }
  }

  AttentionParams p_;
};

}  // namespace attention_detail

template <class Arch>
std::unique_ptr<Kernel> make_attention_for(const KernelSpec& spec) {
  return std::make_unique<attention_detail::AttentionKernel<Arch>>(attention_params(spec.graph->at(spec.node)));
}

}  // namespace rungs::backend::cpu
