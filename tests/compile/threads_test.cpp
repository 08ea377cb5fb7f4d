// SPDX-License-Identifier: Apache-2.0
// CompileOptions::threads on every build: natively 0 means every hardware thread and a count is
// taken as given; in the single-threaded wasm variant every graph runs on one; in the threaded
// variant (wasm-threads) 0 means ThreadPool::wasm_threads() and more is capped to it, and every
// graph shares ThreadPool::shared(). The report says how many ran; the results do not depend on it.
#include <gtest/gtest.h>

#include <algorithm>

#include "backends/thread_pool.hpp"
#include "rungs/rungs.hpp"
#include "test_util.hpp"

namespace {

using namespace rungs;
using rungs::testing::random_vector;

// What a compile with `asked` threads reports on this build.
int expected_threads(int asked) {
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
  (void)asked;
  return 1;
#elif defined(__EMSCRIPTEN__)
  const int cap = backend::ThreadPool::wasm_threads();
  return asked == 0 ? cap : std::min(asked, cap);
#else
  return asked == 0 ? backend::ThreadPool::hardware_threads() : asked;
#endif
}

Graph matmul_graph(int n) {
  Graph g;
  g.output("y", g.gelu(g.matmul(g.input("a", {n, n}), g.param("b", {n, n}))));
  return g;
}

TEST(CompileThreads, TheReportSaysHowManyThreadsRun) {
  Session session(Device::Cpu);
  const Graph g = matmul_graph(32);
  for (int asked : {0, 1, 2, 3, 1000}) {
    CompileOptions options;
    options.threads = asked;
    EXPECT_EQ(session.compile(g, options).report().threads, expected_threads(asked)) << "threads = " << asked;
  }
#if defined(__EMSCRIPTEN_PTHREADS__)
  EXPECT_GE(backend::ThreadPool::wasm_threads(), 1);
  EXPECT_LE(backend::ThreadPool::wasm_threads(), backend::ThreadPool::kMaxWasmThreads);
  EXPECT_EQ(backend::ThreadPool::shared().workers(), backend::ThreadPool::wasm_threads() - 1);
#endif
}

TEST(CompileThreads, GraphsOnSeveralThreadsMatchOneThreadAndShareThePool) {
  constexpr int n = 256;  // 34 MFLOP a run: enough work for two threads (see the next test)
  Session session(Device::Cpu);
  const Graph g = matmul_graph(n);
  const auto a = random_vector(n * n, 1), b = random_vector(n * n, 2);
  CompileOptions one;
  one.threads = 1;
  CompileOptions all;  // 0: every thread there is
  CompiledGraph c1 = session.compile(g, one);
  CompiledGraph cn = session.compile(g, all);
  CompiledGraph cn2 = session.compile(g, all);  // a second graph: in wasm, the same shared pool
  for (auto* c : {&c1, &cn, &cn2}) c->set_param("b", b);
  const NamedInput in{"a", a};
  const auto ref = c1.run({&in, 1});
  for (int round = 0; round < 3; ++round)
    for (auto* c : {&cn, &cn2}) {
      const auto out = c->run({&in, 1});
      ASSERT_EQ(out.size(), 1u);
      EXPECT_LE(rungs::testing::max_rel_error(out[0], ref[0]), 1e-5);
    }
}

#if !defined(__EMSCRIPTEN__)
// A square product of n (gelu(a b), 2 n^3 flops), then three small ones ([n, n] x [n, 2], then
// [n, 2] x [2, 2] twice): the run's four products average about a quarter of the first's work.
// Every kernel is row-local: one row segment. With `untracked`, a second output sums exp(a) over
// a's rows, which active extent (and so the row analysis) refuses: no segments.
Graph one_product_then_small_ones(int n, bool untracked = false) {
  Graph g;
  Value a = g.input("a", {n, n});
  Value y = g.gelu(g.matmul(a, g.param("b", {n, n})));
  y = g.matmul(y, g.param("c0", {n, 2}));
  y = g.matmul(y, g.param("c1", {2, 2}));
  g.output("y", g.matmul(y, g.param("c2", {2, 2})));
  if (untracked) g.output("s", g.sum(g.exp(a), {0}));
  return g;
}

// Natively a run whose products average less than 2.5 MFLOP per thread (kProductFlopsPerThread,
// core/compile/executor.cpp), or 1 MFLOP when it has row segments (kSegmentedFlopsPerThread),
// runs all of its kernels on fewer threads, even where one kernel alone would split: on two
// threads a short run lost more to rows crossing cores than it gained. n = 96 averages 0.45
// MFLOP, n = 128 1.1 (its first product, 4.2 MFLOP, would split on its own), n = 256 8.4.
TEST(CompileThreads, ARunOfSmallProductsStaysOnOneThreadWhole) {
  Session session(Device::Cpu);
  CompileOptions two;
  two.threads = 2;
  struct Case {
    int n;
    bool untracked, splits;
  };
  for (const Case& k : {Case{96, false, false}, Case{128, false, true}, Case{128, true, false}, Case{256, false, true},
                        Case{256, true, true}}) {
    CompiledGraph c = session.compile(one_product_then_small_ones(k.n, k.untracked), two);
    const bool segmented = std::any_of(c.report().kernels.begin(), c.report().kernels.end(),
                                       [](const KernelReport& r) { return r.row_segment >= 0; });
    EXPECT_EQ(segmented, !k.untracked) << "n = " << k.n;
    const int n = k.n;
    c.set_param("b", random_vector(n * n, 2));
    c.set_param("c0", random_vector(n * 2, 3));
    c.set_param("c1", random_vector(4, 4));
    c.set_param("c2", random_vector(4, 5));
    const auto a = random_vector(n * n, 1);
    const NamedInput in{"a", a};
    std::shared_ptr<backend::ThreadPool> pool = backend::ThreadPool::shared_for(1);  // the graph's
    const uint64_t before = pool->parts_run_by_workers();
    const std::string what = "n = " + std::to_string(n) + (k.untracked ? ", no segments" : ", segments");
    if (!k.splits) {
      for (int r = 0; r < 3; ++r) c.run({&in, 1});
      EXPECT_EQ(pool->parts_run_by_workers(), before) << what << ": a worker ran part of a small run";
    } else {
      // The caller claims parts too: on a loaded machine (ctest -j2) it can finish every part of
      // a run before the worker is scheduled (CI saw three runs of it). Run until the worker took
      // one; a run that never splits never gets there.
      for (int r = 0; r < 2000 && pool->parts_run_by_workers() == before; ++r) c.run({&in, 1});
      EXPECT_GT(pool->parts_run_by_workers(), before) << what << ": no worker ran any part in 2,000 runs";
    }
  }
}
#endif

}  // namespace
