// SPDX-License-Identifier: Apache-2.0
#include "backends/thread_pool.hpp"

#include <algorithm>
#include <chrono>
#include <map>

#include "backends/kernel.hpp"

namespace rungs::backend {

namespace {

// How long a worker looks for the next job, and the caller for the end of its call, before
// sleeping: longer than the gaps between the parallel kernels of a graph (a serial kernel runs in
// between), short against a request's think time. A worker that sleeps there is woken for the next
// kernel, and after the machine idled the kernel often wakes it on the caller's core and leaves it
// there: the two threads then share one core (measured on a 2-vCPU VM: the wasm encoder at 256 on
// 2 threads ran at 1.05x-1.07x one thread with 32,768 polls, 1.81x-1.84x with 100 us and
// 1.90x-1.92x with 1 ms).
// Natively 100 us covers the gaps (the same encoder ran 1.7x with 43 us and with 1 ms); wasm's
// kernels are slower, so are its gaps. Measured by the clock: a pause costs 40-140 cycles on x86
// and wasm has none.
#if defined(__EMSCRIPTEN__)
constexpr auto kSpinTime = std::chrono::microseconds(1000);
#else
constexpr auto kSpinTime = std::chrono::microseconds(100);
#endif
constexpr int kPollsPerClockRead = 64;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
  // wasm has no pause instruction: the loop itself is the delay
}

// Spin until done() or the time runs out; true when done. No sched_yield in the loop: on a
// loaded machine a yielding worker hands its core to another process for a whole time slice and
// misses the next kernels (measured: the caller then ran every part itself).
template <class Done>
bool spin_until(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + kSpinTime;
  for (;;) {
    for (int i = 0; i < kPollsPerClockRead; ++i) {
      if (done()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return done();
  }
}

// The job word: generation (16 bits) | parts (16) | parts claimed from the back (16) | from the
// front (16). Each count stays <= parts <= 0xffff, so a claim never carries into the next field.
constexpr uint32_t generation_of(uint64_t w) { return static_cast<uint32_t>(w >> 48); }
constexpr int parts_of(uint64_t w) { return static_cast<int>((w >> 32) & 0xffff); }
constexpr int back_of(uint64_t w) { return static_cast<int>((w >> 16) & 0xffff); }
constexpr int front_of(uint64_t w) { return static_cast<int>(w & 0xffff); }
constexpr uint64_t kFrontClaim = 1, kBackClaim = uint64_t{1} << 16;
constexpr uint64_t job_word(uint32_t generation, int parts) {
  return (static_cast<uint64_t>(generation & 0xffff) << 48) | (static_cast<uint64_t>(parts) << 32);
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
    stop_.store(true, std::memory_order_seq_cst);
  }
  wake_.notify_all();
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

std::shared_ptr<ThreadPool> ThreadPool::shared_for(int workers) {
  static std::mutex mu;
  static std::map<int, std::weak_ptr<ThreadPool>>* pools = new std::map<int, std::weak_ptr<ThreadPool>>;
  std::lock_guard<std::mutex> lock(mu);
  std::weak_ptr<ThreadPool>& slot = (*pools)[workers];
  std::shared_ptr<ThreadPool> pool = slot.lock();
  if (!pool) {
    pool = std::make_shared<ThreadPool>(workers);
    slot = pool;
  }
  return pool;
}

#if defined(__EMSCRIPTEN_PTHREADS__)
namespace {
// Created while the module starts, on the main thread, once the preloaded workers have loaded.
// Created lazily from another thread instead, its pthread_create would be proxied to the main
// thread, which deadlocks when the main thread is blocked waiting for that thread (join).
[[maybe_unused]] ThreadPool& eager_shared_pool = ThreadPool::shared();
}  // namespace
#endif

void ThreadPool::run_part(int part, int parts) {
  const int64_t begin = n_ * part / parts, end = n_ * (part + 1) / parts;
  try {
    (*fn_)(begin, end);
  } catch (...) {
    if (!failed_.exchange(true, std::memory_order_relaxed)) error_ = std::current_exception();
  }
  // seq_cst, against caller_sleeps_ (the caller sets it, then reads done_)
  if (done_.fetch_add(1, std::memory_order_seq_cst) + 1 == parts &&
      caller_sleeps_.load(std::memory_order_seq_cst)) {
    std::lock_guard<std::mutex> lock(mu_);  // the caller checks done_ under mu_ before it waits
    finished_.notify_one();
  }
}

uint32_t ThreadPool::run_parts(uint64_t word, bool worker) {
  for (;;) {
    const int parts = parts_of(word);
    if (front_of(word) + back_of(word) >= parts) return generation_of(word);
    // acquire: the job slot was written before the word that names it was published
    if (job_.compare_exchange_weak(word, word + (worker ? kBackClaim : kFrontClaim), std::memory_order_acquire,
                                   std::memory_order_acquire)) {
      if (worker) worker_parts_.fetch_add(1, std::memory_order_relaxed);
      run_part(worker ? parts - 1 - back_of(word) : front_of(word), parts);
      word = job_.load(std::memory_order_acquire);
    }
  }
}

void ThreadPool::worker_loop() {
  uint32_t seen = 0;  // the generation this worker last found no part left in
  for (;;) {
    uint64_t word = job_.load(std::memory_order_acquire);
    if (generation_of(word) != seen) {
      seen = run_parts(word, true);
      continue;
    }
    auto fresh = [&] {
      return generation_of(job_.load(std::memory_order_seq_cst)) != seen || stop_.load(std::memory_order_relaxed);
    };
    if (!spin_until(fresh)) {
      // Sleep. The caller bumps job_ and then reads sleepers_ (both seq_cst): it either sees this
      // worker counted and wakes it under mu_, or this worker's check below sees the new job.
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, fresh);
      }
      sleepers_.fetch_sub(1, std::memory_order_relaxed);
    }
    if (stop_.load(std::memory_order_relaxed)) return;
  }
}

void ThreadPool::parallel_for(int64_t n, int parts, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  parts = static_cast<int>(std::min<int64_t>({std::max(parts, 1), n, kMaxParts}));
  if (parts == 1 || threads_.empty() || busy_.exchange(true, std::memory_order_acquire)) {
    fn(0, n);  // serial, or the slot is taken: another caller, or a call from inside a part
    return;
  }
  fn_ = &fn;
  n_ = n;
  done_.store(0, std::memory_order_relaxed);
  failed_.store(false, std::memory_order_relaxed);
  error_ = nullptr;
  // Published with part 0 already claimed: the caller runs it, so a call's first rows are always
  // the caller's and the rest the workers' (the row segments' rows stay on the core that wrote them
  // last time; with the part open to all, a spinning worker took it in 4% of the encoder's calls).
  // The caller goes on claiming from the front and the workers from the back, so on two cores of
  // one speed each keeps the same half of a call's tasks from one run to the next (its output
  // stays in its own cache), while a slower core still takes fewer. Products in eight tasks on two
  // threads of a 2-core Xeon (avx512f), against one thread: 256x256x256 1.69x-1.79x with every
  // thread claiming from the front, 1.75x-1.87x from both ends; 512x256x256 1.66x-1.79x ->
  // 1.96x-2.09x (docs/results-xeon.md).
  job_.store(job_word(++generation_, parts) + kFrontClaim, std::memory_order_seq_cst);  // publishes the slot
  if (sleepers_.load(std::memory_order_seq_cst) > 0) {
    { std::lock_guard<std::mutex> lock(mu_); }  // a worker between its check and its wait holds mu_
    wake_.notify_all();
  }
  run_part(0, parts);
  run_parts(job_.load(std::memory_order_acquire), false);
  // seq_cst: read after caller_sleeps_ is set (the last part sets done_, then reads caller_sleeps_)
  auto all_done = [&] { return done_.load(std::memory_order_seq_cst) == parts; };
  if (!spin_until(all_done)) {
    caller_sleeps_.store(true, std::memory_order_seq_cst);
    {
      std::unique_lock<std::mutex> lock(mu_);
      finished_.wait(lock, all_done);
    }
    caller_sleeps_.store(false, std::memory_order_relaxed);
  }
  std::exception_ptr error = failed_.load(std::memory_order_relaxed) ? error_ : nullptr;
  error_ = nullptr;
  busy_.store(false, std::memory_order_release);
  if (error) std::rethrow_exception(error);
}

int RunContext::parts_for(int64_t n, int64_t grain) const {
  // Every part gets at least `grain` items: n just above one grain stays whole instead of being
  // halved into parts that cost more to hand over than they take to run.
  grain = std::max<int64_t>(grain, 1);
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, n / grain)));
}

int RunContext::task_parts(int64_t n) const {
  // Every thread of the pool may claim parts: only when this context may use all of them.
  if (pool == nullptr) return 1;
  if (threads <= 1 || threads < pool->workers() + 1) return parts_for(n, 1);
  return static_cast<int>(std::min<int64_t>(n, ThreadPool::kMaxParts));
}

void RunContext::run_parts(int64_t n, int parts, const std::function<void(int64_t, int64_t)>& fn) const {
  pool->parallel_for(n, parts, fn);
}

}  // namespace rungs::backend
