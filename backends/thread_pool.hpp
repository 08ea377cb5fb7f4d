// SPDX-License-Identifier: Apache-2.0
// backends/thread_pool.hpp: a small persistent pool that kernels split work across.
//
// Natively the compiled graphs of one thread count share a pool (shared_for below, sized by
// CompileOptions::threads); in wasm every graph shares one (shared()). parallel_for splits
// [0, n) into contiguous parts and returns when all are done; the calling thread runs parts too.
//
// The design is MLAS's and XNNPACK's pthreadpool's: a graph runs one parallel kernel after
// another, microseconds apart, so a call must cost about a cache-line round trip, not a queue, an
// allocation and a futex wake-up per kernel.
//   - One fixed job slot (the function, n, the part count), published by bumping a generation
//     packed with the part count and the claimed parts in one atomic word. Threads claim parts
//     from that word with a compare-and-swap: no allocation, no lock, no per-part task; a thread
//     that finishes early takes the next part. The caller claims from the front, the workers from
//     the back (pthreadpool gives each thread a range and lets it steal: the same locality). The
//     generation is 16 bits: a worker asleep across exactly 65,536 calls misses the one that
//     brings its generation back, which then runs on the other threads.
//   - Completion is an atomic count of finished parts; the caller spins on it, then sleeps.
//   - Workers spin on the word for the next job (100 us natively, 1 ms in wasm; see kSpinTime)
//     before they sleep on a condition variable (Atomics.wait in wasm); an idle pool sleeps and
//     costs nothing. The caller takes the lock to wake them only when one sleeps.
//   - The slot is taken with an atomic flag: a call made while it is taken (a second thread
//     running a graph on the same pool, or a parallel_for inside a part) runs serially on its own
//     thread instead of waiting. Nesting is therefore allowed and never deadlocks.
//   - An exception thrown in a part is caught there; the first one is rethrown in the caller once
//     every part has finished (the others still run).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
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
  // fn(begin, end) over [0, n) in at most `parts` contiguous chunks (at most kMaxParts); the
  // caller runs chunks too. Serial (fn(0, n) once) with no workers, one part, or when the pool is
  // already running another call.
  void parallel_for(int64_t n, int parts, const std::function<void(int64_t, int64_t)>& fn);
  static constexpr int kMaxParts = 0xffff;

  // Parts run on the workers (not by callers) since the pool started: lets a test see whether a
  // call was split, without timing it.
  uint64_t parts_run_by_workers() const { return worker_parts_.load(std::memory_order_relaxed); }

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
  // Natively: the pool of `workers` workers that every compiled graph of that thread count
  // shares while one holds it (a new one once the last holder let go). A cache holds a graph per
  // bucket; with a pool each, the workers of the bucket run last would still be spinning while
  // the next bucket's ran, two spinning threads for each core (measured on two cores: another
  // engine's pool spinning in the same process halved a 2-thread run).
  static std::shared_ptr<ThreadPool> shared_for(int workers);

 private:
  void worker_loop();
  // Claims and runs parts of the job `word` names (and of later jobs, if one is published
  // meanwhile) until none is left; returns the generation of the last job looked at.
  uint32_t run_parts(uint64_t word, bool worker);
  void run_part(int part, int parts);

  std::vector<std::thread> threads_;

  // The job word: generation (16 bits) | parts (16) | parts claimed from the back, by workers (16)
  // | from the front, by the caller (16).
  alignas(64) std::atomic<uint64_t> job_{0};
  // The job slot, written by the caller that holds busy_ before it publishes job_.
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0;
  uint32_t generation_ = 0;
  std::atomic<bool> busy_{false};
  alignas(64) std::atomic<int> done_{0};  // parts of the current job finished
  std::atomic<bool> failed_{false};       // error_ holds the job's first exception
  std::exception_ptr error_;
  alignas(64) std::atomic<uint64_t> worker_parts_{0};

  // Sleeping: workers wait on wake_ for a new generation, the caller on finished_ for done_.
  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable finished_;
  std::atomic<int> sleepers_{0};
  std::atomic<bool> caller_sleeps_{false};
  std::atomic<bool> stop_{false};
};

}  // namespace rungs::backend
