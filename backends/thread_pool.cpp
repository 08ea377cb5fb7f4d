// SPDX-License-Identifier: Apache-2.0
#include "backends/thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <exception>

#include "backends/kernel.hpp"

namespace rungs::backend {

namespace {

constexpr int kSpinIterations = 1 << 11;  // about 30-60 us of pause instructions

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#else
  std::this_thread::yield();
#endif
}

// Spin until done() or the budget runs out; true when done.
template <class Done>
bool spin_until(Done done) {
  for (int i = 0; i < kSpinIterations; ++i) {
    if (done()) return true;
    cpu_relax();
  }
  return done();
}

}  // namespace

ThreadPool::ThreadPool(int workers) {
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
  workers = 0;  // a wasm build without pthreads cannot start threads: parallel_for runs serially
#endif
  for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true, std::memory_order_relaxed);
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

int ThreadPool::hardware_threads() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

int ThreadPool::wasm_threads() { return std::min(hardware_threads(), kMaxWasmThreads); }

ThreadPool& ThreadPool::shared() {
  // Never destroyed: a graph a static holds may still run during exit.
  static ThreadPool* pool = new ThreadPool(wasm_threads() - 1);
  return *pool;
}

#if defined(__EMSCRIPTEN_PTHREADS__)
namespace {
// Created while the module starts, on the main thread, once the preloaded workers have loaded.
// Created lazily from another thread instead, its pthread_create would be proxied to the main
// thread, which deadlocks when the main thread is blocked waiting for that thread (join).
[[maybe_unused]] ThreadPool& eager_shared_pool = ThreadPool::shared();
}  // namespace
#endif

void ThreadPool::worker_loop() {
  for (;;) {
    spin_until([this] {
      return queued_.load(std::memory_order_relaxed) > 0 || stop_.load(std::memory_order_relaxed);
    });
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (queue_.empty() && !stop_.load(std::memory_order_relaxed)) {
        ++sleepers_;
        cv_.wait(lock, [this] { return stop_.load(std::memory_order_relaxed) || !queue_.empty(); });
        --sleepers_;
      }
      if (queue_.empty()) return;  // stopping, and nothing is left to run
      task = std::move(queue_.front());
      queue_.pop_front();
      queued_.fetch_sub(1, std::memory_order_relaxed);
    }
    task();
  }
}

void ThreadPool::parallel_for(int64_t n, int parts, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  parts = static_cast<int>(std::min<int64_t>(std::max(parts, 1), n));
  if (parts == 1 || threads_.empty()) {
    fn(0, n);
    return;
  }
  struct Shared {
    std::mutex mu;
    std::condition_variable done;
    int pending = 0;                  // guarded by mu
    std::atomic<bool> finished{false};  // pending reached 0 (set under mu), for the caller's spin
    std::exception_ptr error;
  } shared;
  shared.pending = parts - 1;
  auto chunk = [&](int p) {
    int64_t begin = n * p / parts, end = n * (p + 1) / parts;
    return std::pair<int64_t, int64_t>(begin, end);
  };
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int p = 1; p < parts; ++p) {
      queue_.emplace_back([&, p] {
        auto [b, e] = chunk(p);
        std::exception_ptr err;
        try {
          fn(b, e);
        } catch (...) {
          err = std::current_exception();
        }
        std::lock_guard<std::mutex> l(shared.mu);
        if (err && !shared.error) shared.error = err;
        if (--shared.pending == 0) {
          shared.finished.store(true, std::memory_order_release);
          shared.done.notify_one();
        }
      });
    }
    queued_.fetch_add(parts - 1, std::memory_order_relaxed);
    if (sleepers_ > 0) cv_.notify_all();
  }
  std::exception_ptr mine;
  try {
    auto [b, e] = chunk(0);
    fn(b, e);
  } catch (...) {
    mine = std::current_exception();
  }
  spin_until([&] { return shared.finished.load(std::memory_order_acquire); });
  // Taking the lock even after a successful spin: the last task may still hold it (it notifies
  // under it), and `shared` must outlive that.
  std::unique_lock<std::mutex> lock(shared.mu);
  shared.done.wait(lock, [&] { return shared.pending == 0; });
  if (mine) std::rethrow_exception(mine);
  if (shared.error) std::rethrow_exception(shared.error);
}

void RunContext::parallel_for(int64_t n, int64_t grain,
                              const std::function<void(int64_t, int64_t)>& fn) const {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  int64_t max_parts = (n + grain - 1) / grain;
  int parts = static_cast<int>(std::min<int64_t>(threads, max_parts));
  if (pool == nullptr || parts <= 1) {
    fn(0, n);
    return;
  }
  pool->parallel_for(n, parts, fn);
}

}  // namespace rungs::backend
