// SPDX-License-Identifier: Apache-2.0
// backends/cpu/rows/line_buffer.hpp: a kernel's per-thread buffer on cache lines of its own.
//
// Why: the parts of one parallel_for allocate their buffers at the same moment. In wasm every
// thread allocates from one heap, so std::vectors of two threads lay side by side and shared the
// cache line at their ends; writes to it (attention's running max, sum and output rows) bounced
// that line between the cores, and attention ran at 0.8x-1.45x on two threads of what it did on
// one (1.7x-1.9x with the buffers apart). A LineBuffer starts on a 64-byte line and fills its
// last line, so no other allocation shares a line with it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>

namespace rungs::backend::cpu {

template <class T>
class LineBuffer {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "LineBuffer holds plain values");

 public:
  static constexpr size_t kLineBytes = 64;
  // n rounded up to whole lines of T: pieces of these sizes carved one after another from a
  // LineBuffer each start on a line of their own.
  static constexpr size_t whole_lines(size_t n) {
    constexpr size_t per_line = kLineBytes / sizeof(T) > 0 ? kLineBytes / sizeof(T) : 1;
    return (n + per_line - 1) / per_line * per_line;
  }

  // n values, value-initialized (zeros).
  explicit LineBuffer(size_t n) : n_(n), p_(allocate(n)) { std::fill_n(p_, n_, T{}); }
  // n values left as they are, for a kernel that writes every value before it reads it: zeroing
  // attention's 51 KB of buffers took a fifth of an attention over 16 tokens.
  struct Uninitialized {};
  LineBuffer(size_t n, Uninitialized) : n_(n), p_(allocate(n)) {}
  ~LineBuffer() { ::operator delete[](static_cast<void*>(p_), std::align_val_t(kLineBytes)); }
  LineBuffer(const LineBuffer&) = delete;
  LineBuffer& operator=(const LineBuffer&) = delete;

  T* data() { return p_; }
  const T* data() const { return p_; }
  size_t size() const { return n_; }
  T& operator[](size_t i) { return p_[i]; }
  const T& operator[](size_t i) const { return p_[i]; }
  T* begin() { return p_; }
  T* end() { return p_ + n_; }

 private:
  static T* allocate(size_t n) {
    const size_t bytes = (std::max<size_t>(n, 1) * sizeof(T) + kLineBytes - 1) / kLineBytes * kLineBytes;
    return static_cast<T*>(::operator new[](bytes, std::align_val_t(kLineBytes)));
  }

  size_t n_;
  T* p_;
};

// The calling thread's LineBuffer for `Use` (a tag type, one per kernel buffer), of at least n
// values, kept for the thread's next call: a kernel part's temporaries without a heap call per
// run. In WebAssembly every thread allocates from one heap under one lock, and the parts of a row
// segment or an attention call allocate at the same moment: the mul that ends the encoder's last
// segment took 15 us on two threads against 1.7 on one at 16 tokens. Values are left from the
// last use (a kernel writes every value before it reads it), and a part must not hold the buffer
// across a call to another kernel that uses the same `Use`.
template <class T, class Use>
T* thread_lines(size_t n) {
  thread_local std::unique_ptr<LineBuffer<T>> buffer;
  if (!buffer || buffer->size() < n) {
    buffer.reset();  // free the old one first: the new one may reuse its memory
    buffer = std::make_unique<LineBuffer<T>>(n, typename LineBuffer<T>::Uninitialized{});
  }
  return buffer->data();
}

}  // namespace rungs::backend::cpu
