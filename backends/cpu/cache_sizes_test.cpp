// SPDX-License-Identifier: Apache-2.0
// backends/cpu/cache_sizes_test.cpp: the cache sizes the GEMM blocks for.
#include "backends/cpu/cache_sizes.hpp"

#include <gtest/gtest.h>

#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <unistd.h>
#endif

namespace rungs::backend::cpu {
namespace {

TEST(CacheSizes, AreSaneAndSayWhereTheyCameFrom) {
  const CacheSizes& s = cache_sizes();
  EXPECT_GE(s.l1d, 8 * 1024);
  EXPECT_LE(s.l1d, 1024 * 1024);
  EXPECT_GE(s.l2, 64 * 1024);
  EXPECT_LE(s.l2, 64 * 1024 * 1024);
  EXPECT_GT(s.l2, s.l1d);
  const std::string source = s.source;
  EXPECT_TRUE(source == "cpuid" || source == "sysconf" || source == "default") << source;
#if defined(__EMSCRIPTEN__)
  EXPECT_EQ(source, "default");
#endif
}

// The registers of a Zen 5 EPYC whose hypervisor hides topology extensions (0x8000001D): 48 KiB
// L1d, 1 MiB L2 (the low bits: associativity and line size, ignored).
TEST(CacheSizes, DecodeAmdLegacyLeaves) {
  CacheSizes s;
  ASSERT_TRUE(decode_amd_legacy_leaves(0x300c0140u, 0x04006140u, s));
  EXPECT_EQ(s.l1d, 48 * 1024);
  EXPECT_EQ(s.l2, 1024 * 1024);
  CacheSizes untouched;
  EXPECT_FALSE(decode_amd_legacy_leaves(0x000c0140u, 0x04006140u, untouched));  // no L1 size
  EXPECT_FALSE(decode_amd_legacy_leaves(0x300c0140u, 0x00006140u, untouched));  // no L2 size
  EXPECT_EQ(untouched.l1d, CacheSizes{}.l1d);
  EXPECT_EQ(untouched.l2, CacheSizes{}.l2);
}

#if defined(__linux__) && !defined(__EMSCRIPTEN__) && defined(_SC_LEVEL1_DCACHE_SIZE)
// glibc reads the same CPUID leaves: where it reports sizes, ours must be the same.
TEST(CacheSizes, AgreeWithTheCLibrary) {
  const long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (l1 <= 0 || l2 <= 0) GTEST_SKIP() << "the C library reports no cache sizes here";
  EXPECT_EQ(cache_sizes().l1d, l1);
  EXPECT_EQ(cache_sizes().l2, l2);
}
#endif

}  // namespace
}  // namespace rungs::backend::cpu
