// SPDX-License-Identifier: Apache-2.0
// backends/thread_pool.hpp: a small persistent pool that kernels split work across.
//
// One pool per CompiledGraph (sized by CompileOptions::threads). parallel_for hands contiguous
// chunks to the workers and the calling thread, and returns when all are done. Several run()
// calls on one compiled graph may share the pool: jobs are queued, each caller waits for its own.
//
// Waiting spins before it sleeps: a graph runs one parallel kernel after another, microseconds
// apart, and a worker woken through the condition variable for every kernel cost more than the
// kernels (two threads ran the encoder at extent 64 2.9x slower than one). A worker spins about
// kSpinIterations pauses (tens of microseconds) for the next task before it sleeps, and the
// caller spins as long for its job's last chunk; an idle pool sleeps and costs nothing.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace rungs::backend {

class ThreadPool {
 public:
  explicit ThreadPool(int workers);  // threads besides the caller; 0 = serial (always, in a
                                     // wasm build without pthreads)
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int workers() const { return static_cast<int>(threads_.size()); }
  // fn(begin, end) over [0, n) in at most `parts` chunks, the caller taking one.
  void parallel_for(int64_t n, int parts, const std::function<void(int64_t, int64_t)>& fn);

  static int hardware_threads();

  // The most threads a graph runs on in WebAssembly with pthreads: the hardware concurrency the
  // page or process reports, at most kMaxWasmThreads. The npm package preloads that many Web
  // Workers minus one when it instantiates the module (wasm/npm/index.js must agree).
  static constexpr int kMaxWasmThreads = 8;
  static int wasm_threads();
  // The process-wide pool every graph shares in a wasm build with pthreads (wasm_threads() - 1
  // workers), created on first use. A pthread in wasm is a Web Worker that starts only when its
  // creator returns to the event loop unless it was preloaded, and a page's main thread never
  // waits for one to start: one pool sized to the preloaded workers cannot run out of them, where
  // a pool per compiled graph would (a cache holds a graph per bucket). Natively: not used.
  static ThreadPool& shared();

 private:
  struct Job;
  void worker_loop();
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  std::atomic<int> queued_{0};  // queue_.size(), read without the lock by spinning workers
  int sleepers_ = 0;            // workers waiting on cv_ (guarded by mu_)
  std::atomic<bool> stop_{false};
};

}  // namespace rungs::backend
