#include "backends/thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <exception>

#include "backends/kernel.hpp"

namespace rungs::backend {

ThreadPool::ThreadPool(int workers) {
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
  workers = 0;  // a wasm build without pthreads cannot start threads: parallel_for runs serially
#endif
  for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

int ThreadPool::hardware_threads() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

void ThreadPool::worker_loop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (stop_ && queue_.empty()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
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
    int pending = 0;
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
        if (--shared.pending == 0) shared.done.notify_one();
      });
    }
  }
  cv_.notify_all();
  std::exception_ptr mine;
  try {
    auto [b, e] = chunk(0);
    fn(b, e);
  } catch (...) {
    mine = std::current_exception();
  }
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
