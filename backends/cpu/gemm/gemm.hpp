// SPDX-License-Identifier: Apache-2.0
// backends/cpu/gemm/gemm.hpp: the GEMM's pieces and how the per-ISA code meets the rest.
//
//   C[M, N] = act(A[M, K] @ B[K, N] + bias) + residual
//
// B is packed once into panels of `nr` columns (nr = kNv vectors of the ISA): panel p holds
// columns [p*nr, p*nr + nr) for every k, k-major, zero-padded past N. In f32 a panel is
// [K][nr] floats. In bf16 / f16 two consecutive k share one 32-bit word per column (low half =
// even k, high half = odd k; K padded to even with zeros), so the micro-kernel decodes both with
// 32-bit integer ops on any ISA: a panel is [K/2][nr] words.
//
// A is read in place (row-major, lda); the micro-kernel broadcasts A[i][k] for the rows of its
// tile. Every output element is accumulated as one chain of FMAs over k = 0, 1, ..., K-1 (C is
// reloaded between K blocks), whatever tile, block or thread computes it, so results do not
// depend on the thread count, and the tile size does not change the bits.
//
// This header is included by the generic TU (gemm_kernel.cpp, pack.cpp) and by the per-ISA TUs
// (gemm_<isa>.cpp, compiled with that ISA's flags), so it holds only plain data and declarations.
#pragma once

#include <cstdint>

#include "backends/cpu/cache_sizes.hpp"
#include "backends/cpu/isa.hpp"
#include "rungs/types.hpp"

namespace rungs::backend::cpu::gemm {

enum class Format : uint8_t { F32, BF16, F16 };

constexpr int format_k_step(Format f) { return f == Format::F32 ? 1 : 2; }  // k values per word
constexpr int format_bytes(Format f) { return f == Format::F32 ? 4 : 2; }   // bytes per value

// One (possibly batched-out) GEMM: pointers already offset to the batch.
struct Problem {
  const float* a = nullptr;
  int64_t lda = 0;
  const void* b = nullptr;     // packed panels (Format), panel p at b + p * panel_words words
  int64_t panel_words = 0;     // 32-bit words between consecutive panels
  int64_t k = 0;
  int64_t kc = 0;              // K block (even when the format packs pairs)
  int64_t n = 0;
  int64_t group_panels = 1;    // panels whose C block stays in L2 across the K blocks
  float* c = nullptr;
  int64_t ldc = 0;
  const float* bias = nullptr;      // [n] or null
  const float* residual = nullptr;  // same layout as c (ld = ldr) or null
  int64_t ldr = 0;
  Activation act = Activation::None;
};

// Rows [m0, m1) x panels [p0, p1) of a problem, all K blocks.
using BlockFn = void (*)(const Problem& problem, int64_t m0, int64_t m1, int64_t p0, int64_t p1);

// What one ISA's instantiation provides.
struct IsaGemm {
  const char* name;  // isa_name()
  int mr;            // rows of the main tile
  int nr;            // columns of a panel
  BlockFn block[3];  // by Format
};

// Defined in gemm_<isa>.cpp, each compiled with only that ISA's flags.
IsaGemm isa_gemm_sse42();
IsaGemm isa_gemm_avx2();
IsaGemm isa_gemm_avx512();
IsaGemm isa_gemm_wasm();

// The instantiation for an ISA of this build (nullptr for Scalar and ISAs not built). Ask only for
// ISAs in available_isas(): the per-ISA code may use any instruction of its ISA.
const IsaGemm* isa_gemm(Isa isa);

// Cache blocking, from the static K: kc (K block, a multiple of the format's k step) and mc (row
// block). Fixed per kernel, so a row's sum never depends on the runtime M or the thread count.
struct Blocking {
  int64_t kc;
  int64_t mc;
};
Blocking choose_blocking(int64_t k, const IsaGemm& g, Format f);
Blocking choose_blocking(int64_t k, const IsaGemm& g, Format f, const CacheSizes& caches);

// The bytes of one panel's K block (kc x nr), which every row tile of a row block reuses. In three
// quarters of L1 when that still holds kMinL1PanelK rows of f32 (avx2's 16 columns: 576 on a 48 KB
// L1, 384 on 32 KB; sse4.2's 8), so the panel stays in L1 beside the tile's rows of A: on a
// 48 KB L1 / 2 MB L2 Xeon, forced avx2 at M >= 32, K >= 768 ran 2-10% faster than with the
// panel streamed from L2 (K 768 in two blocks of 384 instead of one), and met its goal against
// OpenBLAS on the rows it missed by 1-7%. Else (avx512's 32 columns, 288 rows in L1: K = 768 in
// three blocks, C reloaded twice) up to two L1s and an eighth of L2, streamed from L2: the
// avx512 tile at M >= 256, K >= 768 ran 3-25% faster with the 96 KB block (K = 768 in one)
// than with the 36 KB one. Wasm always streams: the host's caches are not visible there, and its
// kernels were tuned with the 64 KB budget.
inline constexpr int64_t kMinL1PanelK = 384;
int64_t panel_block_bytes(const CacheSizes& caches, int64_t nr);

// The bytes of the rows' A block (mc x kc), which stays in L2 while the panels pass: three
// quarters of L2 when K is one block and the panel stays in L1 (the fraction that gave the 384 KB
// tuned on a 512 KB L2 EPYC), a quarter when K is more than one block, where the C group (half
// of L2) is read again by each K block and must stay beside it, or when the panel streams from
// L2 beside A. On a 2 MB L2 Xeon, at M = 512 and K >= 768, three quarters made one row block
// whose A overflowed L2 with C or the panels: forced avx2 (two K blocks) ran 512x1024x1024 at
// 109-116 GFLOP/s against 118-121 with a quarter, 512x768x3072 113-115 against 116-120; the
// avx512 tile (one K block of 768, panel streamed) 512x768x3072 145-148 against 159-169,
// 512x768x768 149-164 against 167-174 (three alternating rounds). Wasm keeps three quarters.
int64_t a_block_bytes(const CacheSizes& caches, int64_t kblocks, bool panel_streams);

// How a run is cut into tasks for `threads` threads: row blocks of mc rows (a multiple of mr, or
// all of m) by chunks of pchunk panels, for each of `batches` batches. Starts from mc (the
// blocking's, evened out over the row blocks it makes: 510 + 2 rows left one of two threads
// idle) and all panels per task; when that gives too few tasks, or a count the threads
// would share unevenly (3 tasks on 2 threads), splits each batch further, along rows when there
// are at least as many row tiles as panels, else along panels (and rows too if the panels alone
// are too few). B stays packed once, shared by every task. The split never changes a result: each sum runs over the same K blocks.
struct TaskSplit {
  int64_t mc;
  int64_t pchunk;
};
TaskSplit split_tasks(int64_t batches, int64_t m, int64_t panels, int64_t threads, int64_t mc, int64_t mr);

// A product worth at least kBalanceFlops per task gets at least kBalanceTasks tasks per thread,
// its panels (then, if too few, its row blocks) cut smaller when split_tasks made fewer, and runs them through
// RunContext::parallel_tasks: each thread claims the next task when it is done, so a core slowed
// by another process (or a slower core of a hybrid CPU) takes fewer. The rows of a task stay a
// whole number of row tiles; a result never changes (the sums run over the same K blocks).
inline constexpr int64_t kBalanceTasks = 4;
inline constexpr int64_t kBalanceFlops = 4'000'000;
TaskSplit balance_tasks(TaskSplit s, int64_t batches, int64_t m, int64_t panels, int64_t threads, int64_t flops,
                        int64_t mr);

// The threads a product of `flops` deserves out of `threads`: one more for every
// kFlopsPerThread, about 10 us of one thread's work (2 MFLOP natively, 250 kFLOP in wasm, whose
// SIMD128 kernels run about 5x slower while a hand-over to a spinning worker costs about as much).
int64_t product_threads(int64_t flops, int64_t threads);

}  // namespace rungs::backend::cpu::gemm
