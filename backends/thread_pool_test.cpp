// SPDX-License-Identifier: Apache-2.0
// ThreadPool::parallel_for and RunContext::parallel_for: every index once under every split, the
// grain rule (counted in calls and in parts the workers ran, never timed), exceptions, nesting,
// sleeping workers woken again, many calls in a row. Run under ThreadSanitizer by scripts/test
// (filter *Thread*).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "backends/kernel.hpp"
#include "backends/thread_pool.hpp"
#include "test_util.hpp"

namespace rungs::backend {
namespace {

// The chunks one call handed out, checked to tile [0, n) exactly.
struct Chunks {
  std::mutex mu;
  std::vector<std::pair<int64_t, int64_t>> seen;
  void add(int64_t b, int64_t e) {
    std::lock_guard<std::mutex> lock(mu);
    seen.emplace_back(b, e);
  }
  // Sorted chunks are non-empty and contiguous from 0 to n.
  ::testing::AssertionResult tile(int64_t n) {
    std::sort(seen.begin(), seen.end());
    int64_t at = 0;
    for (auto [b, e] : seen) {
      if (b != at || e <= b) return ::testing::AssertionFailure() << "chunk [" << b << ", " << e << ") after " << at;
      at = e;
    }
    if (at != n) return ::testing::AssertionFailure() << "chunks end at " << at << ", expected " << n;
    return ::testing::AssertionSuccess();
  }
};

// Blocks each of `count` parts until all of them have started: a call that completes proves they
// ran on `count` threads at once. Fails (instead of hanging) after 20 s.
struct Rendezvous {
  explicit Rendezvous(int count) : count(count) {}
  int count;
  std::atomic<int> arrived{0};
  std::atomic<bool> timed_out{false};
  void arrive() {
    arrived.fetch_add(1);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (arrived.load() < count)
      if (std::chrono::steady_clock::now() > deadline) {
        timed_out = true;
        return;
      }
  }
};

TEST(ThreadPool, EveryIndexOnceUnderEverySplit) {
  RUNGS_SKIP_WITHOUT_THREADS();
  for (int workers : {0, 1, 3}) {
    ThreadPool pool(workers);
    for (int64_t n : {1, 2, 3, 5, 7, 64, 1000, 100003}) {
      for (int parts : {-1, 0, 1, 2, 3, 4, 7, 64, 1 << 20}) {
        Chunks chunks;
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
        pool.parallel_for(n, parts, [&](int64_t b, int64_t e) {
          chunks.add(b, e);
          for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)].fetch_add(1, std::memory_order_relaxed);
        });
        SCOPED_TRACE(::testing::Message() << "workers " << workers << ", n " << n << ", parts " << parts);
        ASSERT_TRUE(chunks.tile(n));
        const int64_t expected_calls =
            workers == 0 ? 1 : std::min<int64_t>({std::max(parts, 1), n, ThreadPool::kMaxParts});
        EXPECT_EQ(static_cast<int64_t>(chunks.seen.size()), expected_calls);
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "index " << i;
      }
    }
  }
}

TEST(ThreadPool, NothingToDoCallsNothing) {
  RUNGS_SKIP_WITHOUT_THREADS();
  ThreadPool pool(2);
  int calls = 0;
  pool.parallel_for(0, 4, [&](int64_t, int64_t) { ++calls; });
  pool.parallel_for(-3, 4, [&](int64_t, int64_t) { ++calls; });
  RunContext ctx{&pool, 3, nullptr};
  ctx.parallel_for(0, 1, [&](int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(ThreadPool, PartsRunOnTheWorkersAtOnce) {
  RUNGS_SKIP_WITHOUT_THREADS();
  ThreadPool pool(3);
  const uint64_t before = pool.parts_run_by_workers();
  Rendezvous all(4);
  pool.parallel_for(4, 4, [&](int64_t, int64_t) { all.arrive(); });
  EXPECT_FALSE(all.timed_out.load()) << "4 parts never ran at the same time on a pool of 3 workers + the caller";
  EXPECT_EQ(pool.parts_run_by_workers() - before, 3u);
}

// The first part of every call is the caller's (a row segment's first rows stay on the core that
// wrote them in the previous call); the workers, spinning and ready, take only the others.
TEST(ThreadPool, TheCallerRunsTheFirstPart) {
  RUNGS_SKIP_WITHOUT_THREADS();
  ThreadPool pool(2);
  const std::thread::id caller = std::this_thread::get_id();
  int not_caller = 0;
  for (int call = 0; call < 5000; ++call) {
    std::atomic<bool> first_on_caller{false};
    pool.parallel_for(3, 3, [&](int64_t b, int64_t) {
      if (b == 0) first_on_caller = std::this_thread::get_id() == caller;
    });
    not_caller += first_on_caller.load() ? 0 : 1;
  }
  EXPECT_EQ(not_caller, 0) << "calls whose first part a worker ran";
}

TEST(ThreadPool, SleepingWorkersWakeForTheNextCall) {
  RUNGS_SKIP_WITHOUT_THREADS();
  ThreadPool pool(1);
  for (int round = 0; round < 3; ++round) {
    // Longer than the workers spin: they are asleep when the call comes.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    Rendezvous both(2);
    pool.parallel_for(2, 2, [&](int64_t, int64_t) { both.arrive(); });
    ASSERT_FALSE(both.timed_out.load()) << "round " << round << ": the sleeping worker never took its part";
  }
}

TEST(ThreadPool, AnExceptionInAnyPartIsRethrownAfterEveryPartFinished) {
  RUNGS_SKIP_WITHOUT_THREADS();
  ThreadPool pool(3);
  for (int thrower = -1; thrower < 4; ++thrower) {  // -1: every part throws
    std::atomic<int> finished{0};
    try {
      pool.parallel_for(4, 4, [&](int64_t b, int64_t) {
        if (thrower < 0 || b == thrower) {
          finished.fetch_add(1);
          throw std::runtime_error("part " + std::to_string(b));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        finished.fetch_add(1);
      });
      ADD_FAILURE() << "no exception for thrower " << thrower;
    } catch (const std::runtime_error& e) {
      if (thrower >= 0) EXPECT_EQ(std::string(e.what()), "part " + std::to_string(thrower));
    }
    EXPECT_EQ(finished.load(), 4) << "parallel_for returned before its other parts finished";
  }
  // The pool is whole afterwards.
  Chunks chunks;
  pool.parallel_for(100, 4, [&](int64_t b, int64_t e) { chunks.add(b, e); });
  EXPECT_TRUE(chunks.tile(100));
}

TEST(ThreadPool, NestedCallsRunSeriallyInsideAPart) {
  RUNGS_SKIP_WITHOUT_THREADS();
  ThreadPool pool(2);
  std::vector<std::atomic<int>> hits(30 * 40);
  std::atomic<int> inner_calls{0};
  pool.parallel_for(30, 3, [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row)
      pool.parallel_for(40, 3, [&](int64_t c0, int64_t c1) {
        inner_calls.fetch_add(1);
        for (int64_t c = c0; c < c1; ++c) hits[static_cast<size_t>(row * 40 + c)].fetch_add(1);
      });
  });
  for (size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i].load(), 1) << "index " << i;
  EXPECT_EQ(inner_calls.load(), 30) << "a nested call is one serial call over its whole range";
}

TEST(ThreadPool, ManyCallsInARow) {
  RUNGS_SKIP_WITHOUT_THREADS();
  ThreadPool pool(1);
  std::vector<int64_t> data(64);
  int64_t expected = 0;
  for (int call = 0; call < 20000; ++call) {
    const int64_t n = 1 + call % 64;
    pool.parallel_for(n, 2, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) data[static_cast<size_t>(i)] += i + 1;
    });
    expected += n * (n + 1) / 2;
  }
  int64_t sum = 0;
  for (int64_t v : data) sum += v;
  EXPECT_EQ(sum, expected);
}

TEST(ThreadPool, PoolsComeAndGo) {
  RUNGS_SKIP_WITHOUT_THREADS();
  for (int i = 0; i < 50; ++i) {
    ThreadPool pool(1 + i % 3);
    if (i % 2) {
      std::atomic<int64_t> sum{0};
      pool.parallel_for(100, 4, [&](int64_t b, int64_t e) { sum.fetch_add(e - b); });
      ASSERT_EQ(sum.load(), 100);
    }
  }
}

TEST(ThreadPool, GraphsOfOneThreadCountShareAPoolWhileOneHoldsIt) {
  RUNGS_SKIP_WITHOUT_THREADS();
  std::shared_ptr<ThreadPool> a = ThreadPool::shared_for(2), b = ThreadPool::shared_for(2);
  std::shared_ptr<ThreadPool> c = ThreadPool::shared_for(1);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_NE(a.get(), c.get());
  EXPECT_EQ(a->workers(), 2);
  EXPECT_EQ(c->workers(), 1);
  std::weak_ptr<ThreadPool> held = a;
  a.reset();
  EXPECT_FALSE(held.expired()) << "b still holds the pool";
  b.reset();
  EXPECT_TRUE(held.expired()) << "the last holder let go: the pool and its workers are gone";
  std::shared_ptr<ThreadPool> again = ThreadPool::shared_for(2);
  Chunks chunks;
  again->parallel_for(10, 3, [&](int64_t b0, int64_t e0) { chunks.add(b0, e0); });
  EXPECT_TRUE(chunks.tile(10));
}

// The grain rule: RunContext::parallel_for splits only into parts of at least `grain` items, so a
// small op runs as one call on the caller and never reaches a worker.
TEST(ThreadPool, GrainKeepsSmallWorkOnOneThread) {
  RUNGS_SKIP_WITHOUT_THREADS();
  ThreadPool pool(1);
  RunContext ctx{&pool, 2, nullptr};
  const uint64_t before = pool.parts_run_by_workers();
  for (int64_t n : {1, 100, 1000, 1999}) {
    Chunks chunks;
    ctx.parallel_for(n, 1000, [&](int64_t b, int64_t e) { chunks.add(b, e); });
    EXPECT_EQ(chunks.seen.size(), n < 2000 ? 1u : 2u) << "n " << n;
    EXPECT_TRUE(chunks.tile(n));
  }
  EXPECT_EQ(pool.parts_run_by_workers(), before) << "work below two grains reached a worker";
  // Two grains and more: split in two, and the worker takes the other half.
  Rendezvous both(2);
  Chunks chunks;
  ctx.parallel_for(2000, 1000, [&](int64_t b, int64_t e) {
    chunks.add(b, e);
    both.arrive();
  });
  EXPECT_FALSE(both.timed_out.load());
  EXPECT_TRUE(chunks.tile(2000));
  EXPECT_EQ(chunks.seen.size(), 2u);
  EXPECT_EQ(pool.parts_run_by_workers() - before, 1u);
  // threads caps the parts whatever the grain allows; no pool means one call.
  RunContext one{&pool, 1, nullptr}, none{nullptr, 4, nullptr};
  for (const RunContext* c : {&one, &none}) {
    Chunks serial;
    c->parallel_for(5000, 1, [&](int64_t b, int64_t e) { serial.add(b, e); });
    EXPECT_EQ(serial.seen.size(), 1u);
    EXPECT_TRUE(serial.tile(5000));
  }
}

// The caller claims parts from the front and the workers from the back: with the caller held in
// its first part, the worker runs the rest from the last down, and the caller, released, finds
// none left. On two cores of one speed each thus keeps the same half of a call's parts, run after
// run (and the output it wrote stays in its own cache).
TEST(ThreadPool, WorkersClaimPartsFromTheBack) {
  RUNGS_SKIP_WITHOUT_THREADS();
  ThreadPool pool(1);
  const std::thread::id caller = std::this_thread::get_id();
  std::mutex mu;
  std::vector<int64_t> by_worker, by_caller;
  std::atomic<bool> timed_out{false};
  pool.parallel_for(6, 6, [&](int64_t b, int64_t e) {
    if (std::this_thread::get_id() != caller) {
      std::lock_guard<std::mutex> lock(mu);
      for (int64_t i = b; i < e; ++i) by_worker.push_back(i);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      for (int64_t i = b; i < e; ++i) by_caller.push_back(i);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (by_worker.size() == 5) break;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        timed_out = true;
        break;
      }
    }
  });
  ASSERT_FALSE(timed_out.load()) << "the worker did not take the 5 parts the caller left";
  EXPECT_EQ(by_caller, (std::vector<int64_t>{0}));
  EXPECT_EQ(by_worker, (std::vector<int64_t>{5, 4, 3, 2, 1}));

  // Free on both sides, the caller's parts are a prefix and the worker's the rest, whoever ran more.
  for (int round = 0; round < 50; ++round) {
    std::vector<int> owner(64, -1);
    pool.parallel_for(64, 64, [&](int64_t b, int64_t e) {
      const int who = std::this_thread::get_id() == caller ? 0 : 1;
      for (int64_t i = b; i < e; ++i) owner[static_cast<size_t>(i)] = who;
    });
    const auto first_worker = std::find(owner.begin(), owner.end(), 1);
    SCOPED_TRACE(::testing::Message() << "round " << round);
    EXPECT_EQ(std::count(owner.begin(), owner.end(), -1), 0);
    EXPECT_EQ(std::count(first_worker, owner.end(), 0), 0) << "a caller part after a worker part";
  }
}

// RunContext::parallel_tasks: each task is a part of its own, claimed by whichever thread is
// free. The caller's first task is held until the worker has claimed it all the rest (as on a
// core slowed by another process), so the worker runs them: a split into one range per thread
// would have left half of them to the caller.
TEST(ThreadPool, TasksGoToWhicheverThreadIsFree) {
  RUNGS_SKIP_WITHOUT_THREADS();
  ThreadPool pool(1);
  RunContext ctx{&pool, 2, nullptr};
  EXPECT_EQ(ctx.task_parts(8), 8);
  const uint64_t before = pool.parts_run_by_workers();
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> worker_tasks{0};
  std::atomic<bool> timed_out{false};
  Chunks chunks;
  ctx.parallel_tasks(8, [&](int64_t b, int64_t e) {
    chunks.add(b, e);
    if (std::this_thread::get_id() != caller) {
      worker_tasks.fetch_add(static_cast<int>(e - b));
      return;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (worker_tasks.load() < 7 && !timed_out.load())
      if (std::chrono::steady_clock::now() > deadline) timed_out = true;
  });
  EXPECT_FALSE(timed_out.load()) << "the worker did not take the 7 tasks the caller left";
  EXPECT_TRUE(chunks.tile(8));
  EXPECT_EQ(chunks.seen.size(), 8u) << "one chunk per task";
  EXPECT_EQ(pool.parts_run_by_workers() - before, 7u);
  // A context allowed fewer threads than the pool has splits as parallel_for(n, 1) does: the
  // extra workers may not claim parts. One thread, or no pool, is one call.
  ThreadPool wide(3);
  RunContext two{&wide, 2, nullptr}, one{&pool, 1, nullptr}, none{nullptr, 4, nullptr};
  EXPECT_EQ(two.task_parts(8), 2);
  EXPECT_EQ(one.task_parts(8), 1);
  EXPECT_EQ(none.task_parts(8), 1);
  Chunks split, serial;
  two.parallel_tasks(8, [&](int64_t b, int64_t e) { split.add(b, e); });
  EXPECT_EQ(split.seen.size(), 2u);
  EXPECT_TRUE(split.tile(8));
  none.parallel_tasks(8, [&](int64_t b, int64_t e) { serial.add(b, e); });
  EXPECT_EQ(serial.seen.size(), 1u);
  EXPECT_TRUE(serial.tile(8));
}

}  // namespace
}  // namespace rungs::backend
