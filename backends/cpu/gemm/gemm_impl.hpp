// SPDX-License-Identifier: Apache-2.0
// backends/cpu/gemm/gemm_impl.hpp: the GEMM micro-kernel and block loop, written once over
// xsimd::batch<float, Arch>. Included only by gemm_<isa>.cpp, each compiled with that ISA's
// flags; everything here is a member of Gemm<Arch> so no symbol is shared between ISAs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include <xsimd/xsimd.hpp>

#include "backends/cpu/gemm/gemm.hpp"
#include "backends/cpu/rows/arch.hpp"
#include "backends/cpu/rows/vmath.hpp"

namespace rungs::backend::cpu::gemm {

template <class Arch>
struct Gemm {
  using B = xsimd::batch<float, Arch>;
  using U = xsimd::batch<uint32_t, Arch>;
  static constexpr int kW = static_cast<int>(B::size);
  // Tile: kMr rows x (kNv vectors) columns; 12 x 32 on avx512 (24 accumulators of 32 registers),
  // 6 x 16 on avx2 and 6 x 8 on sse4.2 (12 accumulators of 16 registers), 4 x 8 on wasm. A block
  // of at least kPairMinRows rows runs avx512's tiles as 6 rows x two panels (64 columns, the
  // same 24 accumulators) instead. On a 2-core Xeon, one thread, three alternating rounds against
  // 6 x 64 everywhere (the tile before): 8 and 32 rows 1.10x-1.48x as fast (8x768x768 86-100 ->
  // 124-133 GFLOP/s), 64-512 rows 0.94x-1.18x; 12 x 32 at every row count had run up to 10%
  // slower at M >= 64, K >= 768, and 3-5% slower on the encoder's K = 128 products. V8 compiles
  // wasm to x64 keeping one of the 16 xmm registers as its scratch, wasm has no FMA (a
  // multiply-add needs a temporary), and V8 schedules the tile's products its own way, keeping
  // several broadcasts of A live: 6 x 8 spilled accumulators on every k (22 GFLOP/s at 512^3 in
  // Node 20), 5 x 8 still spilled two (20-23), 4 x 8 leaves room and runs at 30-34.
  static constexpr int kNv = 2;
  static constexpr int kNr = kNv * kW;
  static constexpr int kMr = is_wasm_arch<Arch>() ? 4 : (kW >= 16 ? 12 : 6);
  // With at most this many rows a tile spans two panels, so that a 1- or 2-row product still has
  // 2 * kNv (or more) independent FMA chains in flight.
  static constexpr int kWideRows = 2;
  // Rows of a tile over two panels in a block of at least kPairMinRows rows (avx512; elsewhere
  // two panels are only for blocks of kWideRows rows or fewer).
  static constexpr int kPairRows = kW >= 16 && !is_wasm_arch<Arch>() ? 6 : kWideRows;
  static constexpr int64_t kPairMinRows = 64;
  // Software prefetch of the next panel only when this many row tiles share the current one.
  static constexpr int kPrefetchTiles = 4;

  template <int N, class F>
  XSIMD_INLINE static void unroll(F&& f) {
    unroll_impl(f, std::make_integer_sequence<int, N>{});
  }
  template <class F, int... I>
  XSIMD_INLINE static void unroll_impl(F& f, std::integer_sequence<int, I...>) {
    (f(std::integral_constant<int, I>{}), ...);
  }

  // ---------------------------------------------------------------- reading packed B
  template <Format F>
  using Word = std::conditional_t<F == Format::F32, float, uint32_t>;

  // f16 bits in the top half of each lane (low half zero) -> f32.
  XSIMD_INLINE static B f16_top_to_f32(U x) {
    const U sign = x & U(0x80000000u);
    const U mag = (x & U(0x7fff0000u)) >> 3;  // exponent and mantissa at their f32 positions
    B f = xsimd::bitwise_cast<float>(mag) * B(0x1p112f);  // rebias 15 -> 127; exact, subnormals too
    // f16 exponent 31 (inf / nan) lands at >= 2^16 and must become exponent 255.
    f = xsimd::select(f >= B(65536.f), xsimd::bitwise_cast<float>(mag | U(0x7f800000u)), f);
    return xsimd::bitwise_cast<float>(xsimd::bitwise_cast<uint32_t>(f) | sign);
  }

  // Decode one vector of a packed word row: `even` gets k, `odd` gets k + 1 (16-bit formats).
  template <Format F>
  XSIMD_INLINE static void decode(const Word<F>* p, B& even, B& odd) {
    if constexpr (F == Format::F32) {
      even = B::load_unaligned(p);
      (void)odd;
    } else {
      const U w = U::load_unaligned(p);
      const U lo = w << 16, hi = w & U(0xffff0000u);
      if constexpr (F == Format::BF16) {
        even = xsimd::bitwise_cast<float>(lo);
        odd = xsimd::bitwise_cast<float>(hi);
      } else {
        even = f16_top_to_f32(lo);
        odd = f16_top_to_f32(hi);
      }
    }
  }

  // ---------------------------------------------------------------- epilogue
  // The activations are the row kernels' (one vector form per op, NaN rule included).
  template <Activation A>
  XSIMD_INLINE static B activate(B x) {
    if constexpr (A == Activation::Relu) {
      return vmath::relu(x);
    } else if constexpr (A == Activation::Gelu) {
      return vmath::gelu(x);
    } else if constexpr (A == Activation::GeluTanh) {
      return vmath::gelu_tanh(x);
    } else if constexpr (A == Activation::Silu) {
      return vmath::silu(x);
    } else if constexpr (A == Activation::Sigmoid) {
      return vmath::sigmoid(x);
    } else if constexpr (A == Activation::Tanh) {
      return xsimd::tanh(x);
    } else {
      return x;
    }
  }

  // ---------------------------------------------------------------- the micro-kernel
  struct Tile {
    const float* a;  // row 0 of the tile at the block's first k
    int64_t lda;
    const void* b;   // panel 0 of the tile at the block's first k
    int64_t panel_words;
    int64_t kc;
    float* c;
    int64_t ldc;
    bool first;      // first K block: start from zero, else from C
    bool last;       // last K block: apply the epilogue
    const float* bias;
    const float* res;
    int64_t ldr;
    Activation act;
  };

  // M rows x NP panels, every column valid.
  template <Format F, int M, int NP>
  static void tile(const Tile& t) {
    constexpr int V = kNv * NP;
    constexpr int S = format_k_step(F);
    // The running sums live in `sum`, which nothing but this loop and the final store touches, so
    // the compiler keeps them in registers. (With an array the activations took by reference,
    // clang for wasm kept the sums in memory and stored every accumulator on every k.) Every
    // lambda here is always_inline: GCC 12 left the 12-row tile's per-row lambda out of line,
    // with the sums in memory (47 GFLOP/s against 180 inlined).
    B sum[M][V];
    if (t.first) {
      unroll<M>([&](auto i) __attribute__((always_inline)) { unroll<V>([&](auto v) __attribute__((always_inline)) { sum[i][v] = B(0.f); }); });
    } else {
      unroll<M>([&](auto i) __attribute__((always_inline)) {
        unroll<V>([&](auto v) __attribute__((always_inline)) { sum[i][v] = B::load_unaligned(t.c + i * t.ldc + v * kW); });
      });
    }
    const float* ar[M];
    unroll<M>([&](auto i) __attribute__((always_inline)) { ar[i] = t.a + i * t.lda; });
    const Word<F>* bp[NP];
    unroll<NP>([&](auto p) __attribute__((always_inline)) { bp[p] = static_cast<const Word<F>*>(t.b) + p * t.panel_words; });

    // One word row of the panels: S consecutive k. The rows' pointers advance with k, and the
    // loop counts in ptrdiff_t: 64-bit indices cost a wrap per address in wasm32.
    auto step = [&](auto steps) __attribute__((always_inline)) {
      B bv[S][V];
      unroll<NP>([&](auto p) __attribute__((always_inline)) {
        unroll<kNv>([&](auto v) __attribute__((always_inline)) {
          decode<F>(bp[p] + v * kW, bv[0][p * kNv + v], bv[S - 1][p * kNv + v]);
        });
        bp[p] += kNr;
      });
      unroll<decltype(steps)::value>([&](auto s) __attribute__((always_inline)) {
        unroll<M>([&](auto i) __attribute__((always_inline)) {
          const B ai(ar[i][s]);
          unroll<V>([&](auto v) __attribute__((always_inline)) { sum[i][v] = xsimd::fma(ai, bv[s][v], sum[i][v]); });
        });
      });
      unroll<M>([&](auto i) __attribute__((always_inline)) { ar[i] += S; });
    };
    const std::ptrdiff_t word_rows = static_cast<std::ptrdiff_t>(t.kc / S);
    // avx512 runs four word rows an iteration. On a 2-core Xeon, one thread, the two-panel tile
    // alone ran at 72%-73% of the FMA loop with its K block of B streaming from L2 (how `block`
    // runs it at K >= 768) against 82% with every operand in L1; four k an iteration brought the
    // streamed case to 79%-80%. Whole products (`rungs_gemm_bench --isa avx512f`, the binaries
    // alternating, seven rounds) gained 0%-5% at M >= 256, 2.5% on their geometric mean. The
    // GEMV tiles (kWideRows rows or fewer) keep one k an iteration: they wait on memory, and four
    // showed no gain there. Other ISAs: two k an iteration read within noise on avx2
    // and sse4.2 (geometric means 1.004x, 1.008x), so their loops stay as they were.
    constexpr int U = kW >= 16 && !is_wasm_arch<Arch>() && M > kWideRows ? 4 : 1;
    std::ptrdiff_t j = word_rows;
    for (; j >= U; j -= U) unroll<U>([&](auto) __attribute__((always_inline)) { step(std::integral_constant<int, S>{}); });
    for (; j > 0; --j) step(std::integral_constant<int, S>{});
    if constexpr (S == 2) {
      if (t.kc % S) step(std::integral_constant<int, 1>{});  // odd K: the pad row is skipped
    }

    unroll<M>([&](auto i) __attribute__((always_inline)) {
      unroll<V>([&](auto v) __attribute__((always_inline)) { sum[i][v].store_unaligned(t.c + i * t.ldc + v * kW); });
    });
    if (t.last && (t.bias || t.act != Activation::None || t.res)) finish<V>(t, M);
  }

  // Bias, activation and residual over a finished tile, read back from C (still in L1), then
  // stored again. Out of line and apart from the k loop, on every ISA: the tile function is then
  // only its k loop, whose accumulators own the vector registers. (Inlined into the tile, the
  // epilogue's constants and temporaries competed with the 24 accumulators of the avx512 tile:
  // 256^3 fell from about 140 to 45 GFLOP/s; in wasm, V8 compiled the loop worse: 17-23 against
  // 33-34 GFLOP/s at 512^3.) A loop over rows keeps this small enough that the activations
  // inline into it, which the tile-shaped unrolled copy was not (the fused mlp ran 1.6x slower
  // with that copy out of line on avx2). The extra store and load per vector are noise next to
  // the kc fused multiply-adds behind each.
  template <int V>
  [[gnu::noinline]] static void finish(const Tile& t, int m) {
    switch (t.act) {
      case Activation::None: finish_rows<Activation::None, V>(t, m); break;
      case Activation::Relu: finish_rows<Activation::Relu, V>(t, m); break;
      case Activation::Gelu: finish_rows<Activation::Gelu, V>(t, m); break;
      case Activation::GeluTanh: finish_rows<Activation::GeluTanh, V>(t, m); break;
      case Activation::Silu: finish_rows<Activation::Silu, V>(t, m); break;
      case Activation::Tanh: finish_rows<Activation::Tanh, V>(t, m); break;
      case Activation::Sigmoid: finish_rows<Activation::Sigmoid, V>(t, m); break;
    }
  }
  template <Activation A, int V>
  XSIMD_INLINE static void finish_rows(const Tile& t, int m) {
    for (int i = 0; i < m; ++i) {
      float* c = t.c + i * t.ldc;
      const float* res = t.res ? t.res + i * t.ldr : nullptr;
      unroll<V>([&](auto v) {
        B x = B::load_unaligned(c + v * kW);
        if (t.bias) x += B::load_unaligned(t.bias + v * kW);
        x = activate<A>(x);
        if (res) x += B::load_unaligned(res + v * kW);
        x.store_unaligned(c + v * kW);
      });
    }
  }

  using TileFn = void (*)(const Tile&);

  template <Format F, int NP, int... I>
  static constexpr auto tiles(std::integer_sequence<int, I...>) {
    struct Table {
      TileFn fn[sizeof...(I)];
    };
    return Table{{&tile<F, I + 1, NP>...}};
  }

  // A tile whose last columns fall past N: run it on a staging copy, write back the valid part.
  static void edge_tile(TileFn fn, const Tile& t, int m, int width, int cols) {
    alignas(64) float cbuf[kMr * 2 * kNr];
    alignas(64) float rbuf[kMr * 2 * kNr];
    alignas(64) float bbuf[2 * kNr];
    Tile s = t;
    s.c = cbuf;
    s.ldc = width;
    const size_t bytes = sizeof(float) * static_cast<size_t>(cols);
    if (!t.first) {
      for (int i = 0; i < m; ++i) std::memcpy(cbuf + i * width, t.c + i * t.ldc, bytes);
    }
    if (t.last && t.bias) {
      std::memcpy(bbuf, t.bias, bytes);
      s.bias = bbuf;
    }
    if (t.last && t.res) {
      for (int i = 0; i < m; ++i) std::memcpy(rbuf + i * width, t.res + i * t.ldr, bytes);
      s.res = rbuf;
      s.ldr = width;
    }
    fn(s);
    for (int i = 0; i < m; ++i) std::memcpy(t.c + i * t.ldc, cbuf + i * width, bytes);
  }

  // The next tile's C is fetched while this tile computes: after the first K block, where it is
  // reloaded, and with PREFETCHW (AVX-512's flags) in the first too, where it is only written:
  // fetched for writing, a line another core holds is taken from it now, not when the tile
  // stores. A product on two threads writes q, k and v that the other thread's attention read in
  // the last run, and waited for each such line at its store (the encoder's q, k, v products at
  // 256 tokens on two cores 450 ns apart: 97-108 -> 79-93 us). A read prefetch there (AVX2, SSE)
  // would fetch the line only to ask for it again at the store.
#if defined(__PRFCHW__)
  static constexpr bool kWritePrefetch = true;
#else
  static constexpr bool kWritePrefetch = false;
#endif
  XSIMD_INLINE static void prefetch_rows(const float* c, int64_t ldc, int64_t rows, int width) {
    for (int64_t i = 0; i < rows; ++i)
      for (int j = 0; j < width; j += 64 / static_cast<int>(sizeof(float))) __builtin_prefetch(c + i * ldc + j, 1);
  }

  // The rows of the next tile when `left` rows remain: `mr` (kMr, or kPairRows for pairs of
  // panels), but a last tile of fewer than half of `mr` rows shares the rows with the one before
  // it (16 rows of a 12-row tile run as 8 + 8, not 12 + 4): two tiles either way, and neither has
  // so few rows that its FMA chains wait on each other. Which tile computes a row never changes
  // its sum.
  static int64_t tile_rows(int64_t left, int64_t mr) {
    if (left <= mr) return left;
    return left < mr + mr / 2 ? (left + 1) / 2 : mr;
  }

  // Rows [m0, m1) x panels [p0, p1): for each group of panels (whose C block stays in L2), for
  // each K block, for each panel (or pair of panels), every row tile. The panel's K block
  // (kc x kNr) stays in cache while the row tiles stream A from L2.
  template <Format F>
  static void block(const Problem& pr, int64_t m0, int64_t m1, int64_t p0, int64_t p1) {
    static constexpr auto narrow = tiles<F, 1>(std::make_integer_sequence<int, kMr>{});
    static constexpr auto wide = tiles<F, 2>(std::make_integer_sequence<int, kPairRows>{});
    constexpr int S = format_k_step(F);
    const bool pair = kPairRows > kWideRows && m1 - m0 >= kPairMinRows;
    const int np = m1 - m0 <= kWideRows || pair ? 2 : 1;
    const int64_t step_rows = pair ? kPairRows : kMr;
    // A block of one or two rows has no reuse of B to gain from K blocks: one pass streams each
    // panel. (The K block never changes the result: C is reloaded into the same FMA chain.)
    const int64_t kc_max = np == 2 && !pair && pr.k > 0 ? pr.k : pr.kc;
    const int64_t kblocks = pr.k == 0 ? 1 : (pr.k + kc_max - 1) / kc_max;
    const int64_t group = pr.group_panels < np ? np : pr.group_panels;
    for (int64_t g0 = p0; g0 < p1; g0 += group) {
      const int64_t g1 = p1 - g0 < group ? p1 : g0 + group;
      for (int64_t kb = 0; kb < kblocks; ++kb) {
        const int64_t k0 = kb * kc_max;
        const int64_t kc = pr.k - k0 < kc_max ? pr.k - k0 : kc_max;
        for (int64_t p = g0; p < g1; p += np) {
          const int panels = g1 - p < np ? 1 : np;
          const int width = panels * kNr;
          const int64_t col0 = p * kNr;
          const int cols = static_cast<int>(pr.n - col0 < width ? pr.n - col0 : width);
          // While this panel's K block is in use, fetch the next panel's (from memory when B is
          // large), spread over the row tiles. With few row tiles the hardware prefetcher does
          // better than the extra instructions.
          const char* next_b = nullptr;
          const char* next_b_end = nullptr;
          int64_t lines_per_tile = 0;
          const int64_t tiles = (m1 - m0 + step_rows - 1) / step_rows;
          if (p + panels < p1 && tiles >= kPrefetchTiles) {
            const int64_t block_bytes = (kc + S - 1) / S * kNr * 4;
            next_b = reinterpret_cast<const char*>(static_cast<const Word<F>*>(pr.b) +
                                                   (p + panels) * pr.panel_words + k0 / S * kNr);
            next_b_end = next_b + block_bytes;
            lines_per_tile = (block_bytes / 64 + tiles - 1) / tiles;
          }
          for (int64_t i = m0, m = 0; i < m1; i += m) {
            m = tile_rows(m1 - i, step_rows);
            for (int64_t l = 0; l < lines_per_tile && next_b < next_b_end; ++l, next_b += 64)
              __builtin_prefetch(next_b, 0, 2);
            Tile t{pr.a + i * pr.lda + k0,
                   pr.lda,
                   static_cast<const Word<F>*>(pr.b) + p * pr.panel_words + k0 / S * kNr,
                   pr.panel_words,
                   kc,
                   pr.c + i * pr.ldc + col0,
                   pr.ldc,
                   kb == 0,
                   kb == kblocks - 1,
                   pr.bias ? pr.bias + col0 : nullptr,
                   pr.residual ? pr.residual + i * pr.ldr + col0 : nullptr,
                   pr.ldr,
                   pr.act};
            if ((kb > 0 || kWritePrefetch) && i + m < m1) prefetch_rows(pr.c + (i + m) * pr.ldc + col0, pr.ldc, step_rows, width);
            const TileFn fn = panels == 2 ? wide.fn[m - 1] : narrow.fn[m - 1];
            if (cols == width) {
              fn(t);
            } else {
              edge_tile(fn, t, static_cast<int>(m), width, cols);
            }
          }
        }
      }
    }
  }

  static IsaGemm describe(const char* name) {
    return IsaGemm{name, kMr, kNr, {&block<Format::F32>, &block<Format::BF16>, &block<Format::F16>}};
  }
};

}  // namespace rungs::backend::cpu::gemm
