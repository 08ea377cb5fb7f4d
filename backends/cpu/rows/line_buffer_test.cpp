// SPDX-License-Identifier: Apache-2.0
// LineBuffer: starts on a 64-byte line, owns its last line, holds zeros.
#include "backends/cpu/rows/line_buffer.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace rungs::backend::cpu {
namespace {

uintptr_t line_of(const void* p) { return reinterpret_cast<uintptr_t>(p) / LineBuffer<float>::kLineBytes; }

TEST(LineBuffer, BuffersAllocatedSideBySideNeverShareALine) {
  // Sizes that end mid-line, as attention's and the elementwise kernel's buffers do.
  for (size_t n : {size_t{0}, size_t{1}, size_t{3}, size_t{16}, size_t{17}, size_t{129}}) {
    SCOPED_TRACE(n);
    std::vector<std::unique_ptr<LineBuffer<float>>> bufs;
    for (int i = 0; i < 8; ++i) bufs.push_back(std::make_unique<LineBuffer<float>>(n));
    for (const auto& b : bufs) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(b->data()) % LineBuffer<float>::kLineBytes, 0u);
      EXPECT_EQ(b->size(), n);
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

}  // namespace
}  // namespace rungs::backend::cpu
