// SPDX-License-Identifier: Apache-2.0
// backends/cpu/attention/attention_kernel.hpp: the attention kernel over xsimd batches.
// Included only by the per-ISA translation units (attention_<isa>.cpp).
#pragma once

#include <array>
#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "backends/cpu/attention/attention.hpp"
#include "backends/cpu/rows/arch.hpp"
#include "backends/cpu/rows/line_buffer.hpp"
#include "backends/cpu/rows/simd.hpp"
#include "backends/cpu/rows/vmath.hpp"

namespace rungs::backend::cpu {
namespace attention_detail {

constexpr int64_t kQueryBlock = kAttentionQueryBlock;  // queries sharing one transposed key tile
constexpr int64_t kTileKeys = 64;     // keys per tile (AttentionKernel::kKeys)

template <class A>
class AttentionKernel final : public Kernel {
  using B = vfloat<A>;
  static constexpr int64_t W = B::size;
  static constexpr bool kWasm = is_wasm_arch<A>();
  static constexpr bool kSse = W == 4 && !kWasm;
  // Key vectors whose scores one pass over the head dim makes (and head-dim vectors one pass of
  // the value sums holds): see kGroup.
  static constexpr int kScoreBatches = W == 8 || kWasm ? 2 : 4;
  // Keys per pass over the head dim: kScoreBatches vectors.
  static constexpr int64_t kPassKeys = kScoreBatches * W;
  // Keys per tile: the softmax's reductions, the rescaling of the output and the reload of its
  // accumulators run once per tile. 64 on every ISA: one pass on AVX-512 (two and four, 128 and
  // 256 keys, measured slower), two on AVX2, four on SSE and wasm, where one pass of 32 and 16
  // keys left those fixed costs a large share (encoder attention at 256 tokens in wasm 2.5 ->
  // 1.9 ms; bench_attention at S=256 on SSE4.2 22 -> 25 GFLOP/s, on AVX2 47 -> 51).
  static constexpr int64_t kKeys = kTileKeys;
  static constexpr int kPasses = static_cast<int>(kKeys / kPassKeys);
  static_assert(kKeys % kPassKeys == 0);
  // Queries computed together: their scores and outputs share every load of a key and value row.
  // The register tile, queries x key vectors, as measured (bench_attention natively; in wasm the
  // bundled encoder's attention at 256 tokens, CompiledGraph.profile in Node):
  // - AVX-512: 4 x 4, 16 sums beside 4 key vectors and a broadcast in 32 registers (6 x 4 the same).
  // - AVX2: 4 x 2 (S = 64 / 256: 57-58 / 65 GFLOP/s; 2 x 4 50 / 55, 3 x 4 58 / 65).
  // - wasm: 4 x 2, the shape of its GEMM tile. 2 x 4 spilled in V8's code, which keeps one of the
  //   16 registers and needs a temporary per product (no FMA): 1.80 -> 1.13-1.15 ms a layer
  //   (1 x 4 1.40, 2 x 2 1.27, 3 x 2 1.22-1.25, 8 x 1 1.69).
  // - SSE4.2: 2 x 4 (4 x 2 was 3% slower at S = 256).
  static constexpr int kGroup = kSse ? 2 : 4;
  static constexpr float kNegInf = -std::numeric_limits<float>::infinity();

 public:
  explicit AttentionKernel(AttentionParams p) : p_(p) {}

  void run(const RunContext& ctx, std::span<const TensorArg> in, float* out,
           const Dims& out_dims) const override {
    (void)out_dims;
    const Dims& qd = in[0].dims;
    const int64_t batch = qd[0], sq = qd[1], sk = in[1].dims[1];
    if (batch * sq * qd[2] == 0) return;
    const Layout lay = layout(in);
    const int64_t dh = lay.e / p_.heads, dv = lay.ev / p_.heads;
    const int64_t qblocks = (sq + kQueryBlock - 1) / kQueryBlock;
    const int64_t tasks = batch * p_.heads * qblocks;
    auto part = [&](int64_t t0, int64_t t1) {
      Scratch sc(dh, dv, std::min(sq, kQueryBlock));
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t qb = t % qblocks, bh = t / qblocks;
        query_block(in, lay, out, bh / p_.heads, bh % p_.heads, qb * kQueryBlock,
                    std::min(sq, (qb + 1) * kQueryBlock), sc);
      }
    };
    // A task worth a thread on its own is claimed by whichever thread is free (a slowed core
    // takes fewer); smaller ones go in contiguous runs of at least a grain.
    const int64_t grain = attention_task_grain(sq, sk, dh);
    if (grain == 1) {
      ctx.parallel_tasks(tasks, part);
    } else {
      ctx.parallel_for(tasks, grain, part);
    }
  }

  std::string describe() const override {
    return std::string("attention[") + arch_label<A>() + "](heads " + std::to_string(p_.heads) +
           (p_.causal ? ", causal" : "") + (p_.has_mask ? ", masked" : "") + ")";
  }

 private:
  // Where q, k and v are: q and k rows e wide, v and output rows ev wide; q, k and v rows qs, ks
  // and vs apart, k and v ko and vo columns in (packed_qk: all three in one tensor).
  struct Layout {
    int64_t e, ev, qs, ks, vs, ko, vo;
  };
  Layout layout(std::span<const TensorArg> in) const {
    const int64_t qs = in[0].dims[2], ks = in[1].dims[2], vs = in[2].dims[2], pk = p_.packed_qk;
    return {pk ? pk : qs, pk ? vs - 2 * pk : vs, qs, ks, vs, pk, 2 * pk};
  }

  // The thread's buffers for one query block of at most `rows` queries (thread_lines: no heap
  // call per run), each on cache lines of its own (line_buffer.hpp: the two threads' m, l and acc
  // once shared lines in wasm's one heap). Left as the last call left them: query_block writes
  // every value before it reads it.
  struct Scratch {
    int64_t dh;        // head dim of q and k
    int64_t dv, dvp;   // head dim of v (and the output), rounded up to W
    std::span<float> kt, vt, bias, score, qs, m, l, acc;
    Scratch(int64_t d, int64_t dvalue, int64_t rows) : dh(d), dv(dvalue), dvp((dvalue + W - 1) / W * W) {
      const auto n = sizes(d, dvp, rows);
      std::span<float>* parts[] = {&kt, &vt, &bias, &score, &qs, &m, &l, &acc};
      float* p = thread_lines<float, Scratch>(total(n));
      for (size_t i = 0; i < n.size(); ++i) {
        *parts[i] = std::span<float>(p, n[i]);
        p += LineBuffer<float>::whole_lines(n[i]);
      }
    }
    static std::array<size_t, 8> sizes(int64_t d, int64_t dvp, int64_t rows) {
      const auto q = static_cast<size_t>(rows);
      return {static_cast<size_t>(d * kKeys), static_cast<size_t>(kKeys * dvp), kKeys, kGroup * kKeys,
              q * static_cast<size_t>(d), q, q, q * static_cast<size_t>(dvp)};
    }
    static size_t total(const std::array<size_t, 8>& n) {
      size_t t = 0;
      for (size_t x : n) t += LineBuffer<float>::whole_lines(x);
      return t;
    }
  };

  void query_block(std::span<const TensorArg> in, const Layout& lay, float* out, int64_t b, int64_t h,
                   int64_t i0, int64_t i1, Scratch& sc) const {
    // q and k are heads of dh, v and the output heads of dv (rows ev wide).
    const int64_t sq = in[0].dims[1], sk = in[1].dims[1], ev = lay.ev, qs = lay.qs, ks = lay.ks, vs = lay.vs;
    const int64_t dh = sc.dh, dv = sc.dv, dvp = sc.dvp;
    const float scale = p_.scale ? *p_.scale : 1.f / std::sqrt(static_cast<float>(dh));
    const float* q = in[0].data + b * sq * qs + h * dh;
    const float* k = in[1].data + b * sk * ks + lay.ko + h * dh;
    const float* v = in[2].data + b * sk * vs + lay.vo + h * dv;
    const float* mask = p_.has_mask ? in[3].data + b * sk : nullptr;
    const int64_t shift = sk - sq;  // causal: query i sees keys j <= i + shift
    const int64_t key_end = p_.causal ? std::clamp<int64_t>(i1 - 1 + shift + 1, 0, sk) : sk;

    // The block's queries, scaled, packed [query][dh].
    for (int64_t i = i0; i < i1; ++i)
      for (int64_t d = 0; d < dh; ++d) sc.qs[(i - i0) * dh + d] = q[i * qs + d] * scale;
    std::fill(sc.m.begin(), sc.m.end(), kNegInf);
    std::fill(sc.l.begin(), sc.l.end(), 0.f);
    std::fill(sc.acc.begin(), sc.acc.end(), 0.f);
    for (int64_t k0 = 0; k0 < key_end; k0 += kKeys) {
      const int64_t kb = std::min(kKeys, key_end - k0);
      // The key tile, transposed to [dh, kKeys]; missing keys up to the end of the last key vector
      // that has keys are zero and their bias -inf (vectors past it are skipped). The tile's value rows,
      // copied to [kKeys, dvp] (zero past dv): the products read them contiguously, not ks and vs
      // apart in the source (a packed q|k|v puts a 16-wide head's rows 768 bytes apart).
      const int64_t kpad = (kb + W - 1) / W * W;
      for (int64_t j = 0; j < kpad; ++j)
        sc.bias[j] = j < kb && (!mask || mask[k0 + j] >= 0.5f) ? 0.f : kNegInf;
      // A masked key's key and value rows are staged as zeros: its score is then 0 + -inf (not
      // Inf + -inf = NaN for a non-finite key) and it adds nothing, whatever its rows hold.
      for (int64_t j = 0; j < kb; ++j) {
        const bool kept = sc.bias[j] == 0.f;
        const float* krow = k + (k0 + j) * ks;
        for (int64_t d = 0; d < dh; ++d) sc.kt[d * kKeys + j] = kept ? krow[d] : 0.f;
        const float* vrow = v + (k0 + j) * vs;
        float* vt = sc.vt.data() + j * dvp;
        if (kept) std::copy(vrow, vrow + dv, vt);
        std::fill(vt + (kept ? dv : 0), vt + dvp, 0.f);
      }
      for (int64_t d = 0; d < dh; ++d) std::fill(sc.kt.data() + d * kKeys + kb, sc.kt.data() + d * kKeys + kpad, 0.f);
      int64_t r = 0;
      for (; r + kGroup <= i1 - i0; r += kGroup) group<kGroup>(i0, r, k0, kb, shift, sc);
      for (; r < i1 - i0; ++r) group<1>(i0, r, k0, kb, shift, sc);
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

  // Queries r0 .. r0 + R - 1 of the block (block row i0) against the key tile at k0 (kb keys,
  // staged in sc.kt and sc.vt): scores, the online softmax update, and acc += p v.
  template <int R>
  void group(int64_t i0, int64_t r0, int64_t k0, int64_t kb, int64_t shift, Scratch& sc) const {
    const int64_t dh = sc.dh;
    // Scores: R queries x the tile's keys, kScoreBatches key vectors per pass over the head dim
    // (score_pass).
    const float* kt = sc.kt.data();
    const float* qs = sc.qs.data() + r0 * dh;
    int64_t visible[R];
    B best[R];
    for (int r = 0; r < R; ++r) {
      visible[r] = p_.causal ? std::clamp<int64_t>(i0 + r0 + r + shift - k0 + 1, 0, kb) : kb;
      best[r] = B(kNegInf);
    }
    for (int pass = 0; pass < kPasses; ++pass) {
      const int64_t j0 = pass * kPassKeys;
      if (j0 >= kb) break;
      // A short tile's last pass computes only the key vectors that hold keys (16 tokens on
      // AVX-512: one vector of 16 keys, not a pass of 64).
      switch (std::min<int64_t>(kScoreBatches, (kb - j0 + W - 1) / W)) {
        case 1: score_pass<R, 1>(qs, kt, j0, visible, best, sc); break;
        case 2:
          if constexpr (kScoreBatches >= 2) score_pass<R, 2>(qs, kt, j0, visible, best, sc);
          break;
        case 3:
          if constexpr (kScoreBatches >= 3) score_pass<R, 3>(qs, kt, j0, visible, best, sc);
          break;
        default: score_pass<R, kScoreBatches>(qs, kt, j0, visible, best, sc); break;
      }
    }
    // The online softmax update per query: sc.score[r] becomes p = exp(s - m_new), 0 for every
    // key the query does not see.
    const int64_t tile_vectors = (kb + W - 1) / W;
    float corr[R];
    int64_t keys = 0;  // keys any of the R queries sees
    for (int r = 0; r < R; ++r) {
      const int64_t row = r0 + r;
      float* score = sc.score.data() + r * kKeys;
      const float tile_max = vmath::reduce_maximum(best[r]);  // a NaN score counts as visible
      if (tile_max == kNegInf) {  // every key of the tile dropped for this query: no change
        corr[r] = 1.f;
        for (int64_t u = 0; u < tile_vectors; ++u) B(0.f).store_unaligned(score + u * W);
        visible[r] = 0;  // and nothing to add
        continue;
      }
      keys = std::max(keys, visible[r]);
      const float m_old = sc.m[row], m_new = vmath::maximum_ref(m_old, tile_max);
      corr[r] = std::exp(m_old - m_new);  // 0 on the first visible tile (m_old = -inf)
      B sum(0.f);
      const B m(m_new);
      for (int64_t u = 0; u < tile_vectors; ++u) {
        const B p = vmath::exp_nonpositive(B::load_unaligned(score + u * W) - m);
        p.store_unaligned(score + u * W);
        sum += p;
      }
      sc.m[row] = m_new;
      sc.l[row] = sc.l[row] * corr[r] + xsimd::reduce_add(sum);
    }
    if (keys == 0) return;
    for (int r = 0; r < R; ++r) visible[r] = std::min(visible[r], keys);
    // acc = acc * corr + sum_j p_j v_j for the R queries, kScoreBatches vectors of the head dim at
    // a time (accumulate).
    for (int64_t d0 = 0; d0 < sc.dvp; d0 += kScoreBatches * W) {
      switch (std::min<int64_t>(kScoreBatches, (sc.dvp - d0) / W)) {
        case 1: accumulate<R, 1>(r0, visible, d0, corr, sc); break;
        case 2:
          if constexpr (kScoreBatches >= 2) accumulate<R, 2>(r0, visible, d0, corr, sc);
          break;
        case 3:
          if constexpr (kScoreBatches >= 3) accumulate<R, 3>(r0, visible, d0, corr, sc);
          break;
        default: accumulate<R, kScoreBatches>(r0, visible, d0, corr, sc); break;
      }
    }
  }

  // Scores of R queries against the U key vectors at j0 (U W keys), every key vector loaded once
  // for the R queries; bias (dropped keys -inf) and causal visibility applied, into sc.score[r];
  // best[r] the running maximum.
  template <int R, int U>
  void score_pass(const float* qs, const float* kt, int64_t j0, const int64_t* visible, B* best,
                  Scratch& sc) const {
    // Pointers that advance and a pointer-sized count, as in the GEMM tile: 64-bit indices cost
    // a wrap per address in wasm32.
    const auto dh = static_cast<std::ptrdiff_t>(sc.dh);
    B s[R][U];
    for (int r = 0; r < R; ++r)
      for (int u = 0; u < U; ++u) s[r][u] = B(0.f);
    const float* kp = kt + j0;
    const float* qp = qs;
    for (std::ptrdiff_t d = dh; d > 0; --d) {
      B kv[U];
      for (int u = 0; u < U; ++u) kv[u] = B::load_unaligned(kp + u * W);
      for (int r = 0; r < R; ++r) {
        const B qv(qp[r * dh]);
        for (int u = 0; u < U; ++u) s[r][u] = xsimd::fma(qv, kv[u], s[r][u]);
      }
      kp += kKeys;
      ++qp;
    }
    for (int r = 0; r < R; ++r)
      for (int u = 0; u < U; ++u) {
        const int64_t j = j0 + u * W;
        B x = s[r][u] + B::load_unaligned(sc.bias.data() + j);
        const int64_t lanes = std::clamp<int64_t>(visible[r] - j, 0, W);
        if (lanes < W) x = keep_first<A>(x, static_cast<size_t>(lanes), kNegInf);
        x.store_unaligned(sc.score.data() + r * kKeys + j);
        best[r] = vmath::maximum(best[r], x);  // NaN propagates (docs/numerics.md)
      }
  }

  // acc[:, d0 .. d0 + U W) = acc * corr + sum_j p_j v_j over the keys of the tile each of the R
  // queries sees (its first visible[r]): U vectors of the head dim held in registers across the
  // keys, each value row loaded once for the R queries. A narrow head (U < kScoreBatches) keeps L
  // keys in flight, each with its own sums, added at the end: R x U sums alone are too few chains
  // to cover the FMA latency (4 queries x one 16-wide vector: 4 chains where two FMA ports need 8).
  // A masked key adds nothing, even if its rows hold Inf or NaN: they were staged as zeros. A key
  // a query does not see (causal: the tile on the diagonal) is left out of that query's sum, not
  // multiplied by p = 0, which an Inf or NaN value would turn into NaN.
  template <int R, int U>
  void accumulate(int64_t r0, const int64_t* visible, int64_t d0, const float* corr, Scratch& sc) const {
    constexpr int L = kScoreBatches / U;
    const float* score = sc.score.data();
    const float* vt = sc.vt.data() + d0;
    const auto dvp = static_cast<std::ptrdiff_t>(sc.dvp);
    B o[L][R][U];
    for (int r = 0; r < R; ++r) {
      const float* acc = sc.acc.data() + (r0 + r) * dvp + d0;
      const B c(corr[r]);
      for (int u = 0; u < U; ++u) {
        o[0][r][u] = B::load_unaligned(acc + u * W) * c;
        for (int l = 1; l < L; ++l) o[l][r][u] = B(0.f);
      }
    }
    // The value row and the scores advance by pointer (ptrdiff_t, as in score_pass).
    const float* vp = vt;
    const float* sp = score;
    const auto step = [&](int l) {
      B vv[U];
      for (int u = 0; u < U; ++u) vv[u] = B::load_unaligned(vp + u * W);
      for (int r = 0; r < R; ++r) {
        const B pj(sp[r * kKeys]);
        for (int u = 0; u < U; ++u) o[l][r][u] = xsimd::fma(pj, vv[u], o[l][r][u]);
      }
      vp += dvp;
      ++sp;
    };
    int64_t common = visible[0];  // keys every query of the group sees
    for (int r = 1; r < R; ++r) common = std::min(common, visible[r]);
    std::ptrdiff_t j = static_cast<std::ptrdiff_t>(common);
    for (; j >= L; j -= L)
      for (int l = 0; l < L; ++l) step(l);
    for (; j > 0; --j) step(0);
    for (int r = 0; r < R; ++r) {  // the rest, query by query (ptrdiff_t indices as above)
      const auto end = static_cast<std::ptrdiff_t>(visible[r]);
      for (auto k = static_cast<std::ptrdiff_t>(common); k < end; ++k) {
        const B pj(score[r * kKeys + k]);
        for (int u = 0; u < U; ++u) o[0][r][u] = xsimd::fma(pj, B::load_unaligned(vt + k * dvp + u * W), o[0][r][u]);
      }
    }
    for (int r = 0; r < R; ++r) {
      float* acc = sc.acc.data() + (r0 + r) * dvp + d0;
      for (int u = 0; u < U; ++u) {
        B sum = o[0][r][u];
        for (int l = 1; l < L; ++l) sum += o[l][r][u];
        sum.store_unaligned(acc + u * W);
      }
    }
  }

  AttentionParams p_;
};

}  // namespace attention_detail

template <class Arch>
std::unique_ptr<Kernel> make_attention_for(const KernelParams& params) {
  return std::make_unique<attention_detail::AttentionKernel<Arch>>(params.attention);
}

}  // namespace rungs::backend::cpu
