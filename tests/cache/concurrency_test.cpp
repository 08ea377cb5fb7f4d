// SPDX-License-Identifier: Apache-2.0
// api.md 5.2: many threads on one BucketedCompileCache. Each bucket compiles exactly once under a
// race, a slow compile never blocks another bucket, a failed compile lets a waiter retry, and
// concurrent run_padded calls on one graph give the right rows. Run it under ThreadSanitizer too
// (tests/cache/README.md).
#include <gtest/gtest.h>

#include "test_util.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "rungs/cache.hpp"

namespace rungs {
namespace {

Graph scaled_rows(uint64_t upper) {
  Graph g;
  Value x = g.input("x", {static_cast<int64_t>(upper), 3});
  g.output("y", g.add(g.mul(x, g.constant({2.0f}, {1})), g.constant({1.0f}, {1})));
  return g;
}

TEST(BucketedCacheThreads, StressManyThreadsManyKeysEachBucketCompilesOnce) {
  RUNGS_SKIP_WITHOUT_THREADS();
  auto c = BucketedCompileCache::power_of_two_ladder(Device::Reference, 4, 128);  // 6 buckets
  std::mutex m;
  std::map<uint64_t, int> builds;  // upper -> build calls
  auto build = [&](uint64_t upper) {
    {
      std::lock_guard<std::mutex> lock(m);
      ++builds[upper];
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // widen the race window
    return scaled_rows(upper);
  };
  constexpr int kThreads = 12;
  constexpr int kIters = 60;
  std::atomic<int> wrong{0};
  std::atomic<int> runs{0};
  std::vector<std::map<uint64_t, CompiledGraph*>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      for (int i = 0; i < kIters; ++i) {
        const uint64_t key = 1 + rng() % 140;  // some keys past 128: out of range
        if (i % 3 == 0) {
          auto e = c.get_or_compile(key, build);
          if (!e) {
            if (key <= 128) ++wrong;
            continue;
          }
          seen[t][e->upper] = e->graph;
          continue;
        }
        std::vector<float> x(key * 3);
        for (size_t j = 0; j < x.size(); ++j) x[j] = static_cast<float>((j + t) % 17);
        const PaddedInput in[] = {{"x", x, 3}};
        const size_t inners[] = {3};
        auto r = c.run_padded(key, key, build, in, inners);
        if (!r) {
          if (key <= 128) ++wrong;
          continue;
        }
        ++runs;
        if (r->outputs[0].size() != x.size()) {
          ++wrong;
          continue;
        }
        for (size_t j = 0; j < x.size(); ++j)
          if (r->outputs[0][j] != 2 * x[j] + 1) {
            ++wrong;
            break;
          }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  for (const auto& [upper, n] : builds) EXPECT_EQ(n, 1) << "bucket at " << upper << " built " << n << " times";
  EXPECT_EQ(builds.size(), c.compiled_count());
  // Every thread saw the same graph for a bucket.
  for (int t = 1; t < kThreads; ++t)
    for (const auto& [upper, g] : seen[t])
      for (int u = 0; u < t; ++u)
        if (seen[u].count(upper)) EXPECT_EQ(seen[u][upper], g);
  CacheStats s = c.stats();
  EXPECT_EQ(s.compiles, builds.size());
  EXPECT_EQ(s.runs, static_cast<uint64_t>(runs.load()));
  EXPECT_EQ(s.hits + s.compiles + s.out_of_range, static_cast<uint64_t>(kThreads * kIters));
}

TEST(BucketedCacheThreads, SlowCompileDoesNotBlockOtherBuckets) {
  RUNGS_SKIP_WITHOUT_THREADS();
  auto c = BucketedCompileCache::power_of_two_ladder(Device::Reference, 8, 64);
  std::promise<void> release_slow;
  std::shared_future<void> released = release_slow.get_future().share();
  std::promise<void> slow_started;
  std::thread slow([&] {
    c.get_or_compile(3, [&](uint64_t u) {
      slow_started.set_value();
      released.wait();  // holds bucket 0's compile open until the other bucket is done
      return scaled_rows(u);
    });
  });
  slow_started.get_future().wait();
  auto other = std::async(std::launch::async, [&] { return c.get_or_compile(40, scaled_rows).has_value(); });
  const bool finished = other.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  release_slow.set_value();
  slow.join();
  ASSERT_TRUE(finished) << "a compile of bucket [1, 9) blocked bucket [33, 65)";
  EXPECT_TRUE(other.get());
  EXPECT_EQ(c.compiled_count(), 2u);
}

TEST(BucketedCacheThreads, WaitersOnTheSameBucketGetTheOneGraph) {
  RUNGS_SKIP_WITHOUT_THREADS();
  auto c = BucketedCompileCache::power_of_two_ladder(Device::Reference, 8, 8);
  std::atomic<int> builds{0};
  auto slow = [&](uint64_t u) {
    ++builds;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return scaled_rows(u);
  };
  std::vector<std::future<CompiledGraph*>> f;
  for (int i = 0; i < 8; ++i)
    f.push_back(std::async(std::launch::async, [&] { return c.get_or_compile(5, slow)->graph; }));
  CompiledGraph* first = f[0].get();
  for (size_t i = 1; i < f.size(); ++i) EXPECT_EQ(f[i].get(), first);
  EXPECT_EQ(builds.load(), 1);
}

TEST(BucketedCacheThreads, FailedCompileWakesWaitersWhoRetry) {
  RUNGS_SKIP_WITHOUT_THREADS();
  auto c = BucketedCompileCache::power_of_two_ladder(Device::Reference, 8, 8);
  std::atomic<int> attempts{0};
  auto flaky = [&](uint64_t u) {
    if (attempts.fetch_add(1) == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      throw std::runtime_error("first build fails");
    }
    return scaled_rows(u);
  };
  std::vector<std::future<bool>> f;
  for (int i = 0; i < 6; ++i)
    f.push_back(std::async(std::launch::async, [&] {
      try {
        return c.get_or_compile(4, flaky).has_value();
      } catch (const std::runtime_error&) {
        return false;
      }
    }));
  int ok = 0;
  for (auto& x : f) ok += x.get() ? 1 : 0;
  EXPECT_EQ(ok, 5);              // only the first caller saw the error
  EXPECT_EQ(attempts.load(), 2);  // one failure, then one successful retry
  EXPECT_EQ(c.compiled_count(), 1u);
  EXPECT_EQ(c.stats().buckets[0].failed_compiles, 1u);
}

}  // namespace
}  // namespace rungs
