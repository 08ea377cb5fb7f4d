// SPDX-License-Identifier: Apache-2.0
// core/cache/single_flight.hpp: one compile per key at a time, the protocol both caches use.
//
// Why: two callers missing the same key at once must not both compile it (twice the time, twice
// the memory, a byte budget charged twice), and callers of other keys must not wait for it. The
// first caller of a key claims it and compiles outside the lock; a later caller waits until that
// compile lands, then looks again: a hit, or (the compile threw) a claim of its own, so it retries
// with its own build. The owner's mutex guards both its entries and the busy flags.
#pragma once

#include <condition_variable>
#include <mutex>

namespace rungs::cache_detail {

class SingleFlight {
 public:
  // With `lock` held on the owner's mutex: returns lookup()'s value as soon as it is truthy (a
  // hit), else waits while busy() (another caller compiles this key); then sets busy() and returns
  // a falsy value: this caller compiles and must call land(). busy() is asked again after every
  // wait, so it may return a reference into a container the owner changes meanwhile.
  template <class Lookup, class Busy>
  auto claim_or_wait(std::unique_lock<std::mutex>& lock, Lookup lookup, Busy busy) -> decltype(lookup()) {
    for (;;) {
      if (auto found = lookup()) return found;
      if (!busy()) break;
      cv_.wait(lock);
    }
    busy() = true;
    return {};
  }

  // After the claimed compile, whether it succeeded (its result published under the same lock) or
  // threw: clears the flag under `lock`, then wakes the waiters once the lock is released.
  template <class Clear>
  void land(std::unique_lock<std::mutex>& lock, Clear clear_busy) {
    clear_busy();
    lock.unlock();
    cv_.notify_all();
  }

 private:
  std::condition_variable cv_;
};

}  // namespace rungs::cache_detail
