// SPDX-License-Identifier: Apache-2.0
// LineBuffer: starts on a 64-byte line, owns its last line, holds zeros (unless asked not to).
#include "backends/cpu/rows/line_buffer.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "test_util.hpp"

namespace rungs::backend::cpu {
namespace {

uintptr_t line_of(const void* p) { return reinterpret_cast<uintptr_t>(p) / LineBuffer<float>::kLineBytes; }

TEST(LineBuffer, BuffersAllocatedSideBySideNeverShareALine) {
  // Sizes that end mid-line, as attention's and the elementwise kernel's buffers do; zeroed
  // (the elementwise kernel's) and not (attention's).
  for (bool zeroed : {true, false})
    for (size_t n : {size_t{0}, size_t{1}, size_t{3}, size_t{16}, size_t{17}, size_t{129}}) {
      SCOPED_TRACE(std::to_string(n) + (zeroed ? " zeroed" : " uninitialized"));
      std::vector<std::unique_ptr<LineBuffer<float>>> bufs;
      for (int i = 0; i < 8; ++i)
        bufs.push_back(zeroed ? std::make_unique<LineBuffer<float>>(n)
                              : std::make_unique<LineBuffer<float>>(n, LineBuffer<float>::Uninitialized{}));
      for (const auto& b : bufs) {
        EXPECT_EQ(reinterpret_cast<uintptr_t>(b->data()) % LineBuffer<float>::kLineBytes, 0u);
        EXPECT_EQ(b->size(), n);
        if (zeroed)
          for (float x : *b) EXPECT_EQ(x, 0.f);
      }
      // Lines [first, last] of each buffer are disjoint from every other's.
      for (size_t i = 0; i < bufs.size(); ++i)
        for (size_t j = 0; j < bufs.size(); ++j) {
          if (i == j || n == 0) continue;
          const uintptr_t a0 = line_of(bufs[i]->data()), a1 = line_of(bufs[i]->data() + n - 1);
          const uintptr_t b0 = line_of(bufs[j]->data()), b1 = line_of(bufs[j]->data() + n - 1);
          EXPECT_TRUE(a1 < b0 || b1 < a0) << "buffers " << i << " and " << j << " share a line";
        }
    }
}

TEST(LineBuffer, HoldsPlainStructs) {
  struct Pair {
    const float* p;
    float v;
  };
  LineBuffer<Pair> b(5);
  for (size_t i = 0; i < b.size(); ++i) {
    EXPECT_EQ(b[i].p, nullptr);
    EXPECT_EQ(b[i].v, 0.f);
  }
  b[4].v = 2.f;
  EXPECT_EQ(b.data()[4].v, 2.f);
}

struct UseA;  // thread_lines' tags
struct UseB;

TEST(ThreadLines, AThreadKeepsItsBufferAndGrowsItOnLines) {
  float* a = thread_lines<float, UseA>(100);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % LineBuffer<float>::kLineBytes, 0u);
  a[99] = 7.f;
  EXPECT_EQ((thread_lines<float, UseA>(50)), a) << "a smaller request reuses the buffer";
  EXPECT_EQ((thread_lines<float, UseA>(100)[99]), 7.f) << "values are kept between calls";
  EXPECT_NE((thread_lines<float, UseB>(100)), a) << "each use has its own buffer";
  float* grown = thread_lines<float, UseA>(5000);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(grown) % LineBuffer<float>::kLineBytes, 0u);
  grown[4999] = 1.f;  // all of it is there (ASan checks the bounds)
  EXPECT_EQ((thread_lines<float, UseA>(5000)), grown);
}

TEST(ThreadLines, ThreadsHaveBuffersOnLinesOfTheirOwn) {
  RUNGS_SKIP_WITHOUT_THREADS();
  constexpr size_t n = 37;  // ends mid-line
  float* mine = thread_lines<float, UseA>(n);
  float* theirs = nullptr;
  std::thread([&] { theirs = thread_lines<float, UseA>(n); }).join();
  ASSERT_NE(theirs, nullptr);
  const uintptr_t a0 = line_of(mine), a1 = line_of(mine + n - 1);
  const uintptr_t b0 = line_of(theirs), b1 = line_of(theirs + n - 1);
  EXPECT_TRUE(a1 < b0 || b1 < a0) << "two threads' buffers share a line";
}

}  // namespace
}  // namespace rungs::backend::cpu
