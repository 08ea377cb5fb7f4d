// SPDX-License-Identifier: Apache-2.0
// backends/cpu/cache_sizes.cpp: see cache_sizes.hpp.
#include "backends/cpu/cache_sizes.hpp"

#if (defined(__x86_64__) || defined(__i386__)) && !defined(__EMSCRIPTEN__)
#include <cpuid.h>
#include <unistd.h>
#define RUNGS_HAVE_CPUID 1
#endif

#include <cstring>

namespace rungs::backend::cpu {

bool decode_amd_legacy_leaves(uint32_t ecx_80000005, uint32_t ecx_80000006, CacheSizes& out) {
  const int64_t l1_kib = ecx_80000005 >> 24, l2_kib = ecx_80000006 >> 16;
  if (l1_kib == 0 || l2_kib == 0) return false;
  out.l1d = l1_kib * 1024, out.l2 = l2_kib * 1024;
  return true;
}

namespace {

#if defined(RUNGS_HAVE_CPUID)
// Walks the deterministic cache parameter leaf (4 or 0x8000001D: the same layout) and fills the
// level 1 data and level 2 sizes it finds. Returns whether both were found.
bool walk_leaf(unsigned leaf, CacheSizes& out) {
  bool l1 = false, l2 = false;
  for (unsigned sub = 0; sub < 16; ++sub) {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid_count(leaf, sub, &a, &b, &c, &d)) return false;
    const unsigned type = a & 0x1f;  // 0: no more caches, 1: data, 2: instruction, 3: unified
    if (type == 0) break;
    const unsigned level = (a >> 5) & 0x7;
    const int64_t ways = ((b >> 22) & 0x3ff) + 1, partitions = ((b >> 12) & 0x3ff) + 1;
    const int64_t line = (b & 0xfff) + 1, sets = int64_t{c} + 1;
    const int64_t bytes = ways * partitions * line * sets;
    if (level == 1 && (type == 1 || type == 3)) out.l1d = bytes, l1 = true;
    if (level == 2 && type != 2) out.l2 = bytes, l2 = true;
  }
  return l1 && l2;
}

bool from_cpuid(CacheSizes& out) {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return false;
  const unsigned max_leaf = a;
  char vendor[13] = {};
  std::memcpy(vendor, &b, 4), std::memcpy(vendor + 4, &d, 4), std::memcpy(vendor + 8, &c, 4);
  if (std::strcmp(vendor, "GenuineIntel") == 0 && max_leaf >= 4) return walk_leaf(4, out);
  const bool amd = std::strcmp(vendor, "AuthenticAMD") == 0 || std::strcmp(vendor, "HygonGenuine") == 0;
  const unsigned max_ext = __get_cpuid_max(0x80000000u, nullptr);
  if (max_ext >= 0x8000001Du) {
    __get_cpuid(0x80000001u, &a, &b, &c, &d);
    if ((c & (1u << 22)) && walk_leaf(0x8000001Du, out)) return true;  // topology extensions
  }
  if (!amd || max_ext < 0x80000006u) return false;
  unsigned c5 = 0, c6 = 0;
  __get_cpuid(0x80000005u, &a, &b, &c5, &d);
  __get_cpuid(0x80000006u, &a, &b, &c6, &d);
  return decode_amd_legacy_leaves(c5, c6, out);
}

bool from_sysconf(CacheSizes& out) {
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE)
  const long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (l1 <= 0 || l2 <= 0) return false;
  out.l1d = l1, out.l2 = l2;
  return true;
#else
  (void)out;
  return false;
#endif
}
#endif

CacheSizes detect() {
  CacheSizes s;
#if defined(RUNGS_HAVE_CPUID)
  CacheSizes found;
  if (from_cpuid(found)) {
    found.source = "cpuid";
    s = found;
  } else if (from_sysconf(found)) {
    found.source = "sysconf";
    s = found;
  }
#endif
  // Nonsense from a hypervisor must not make a block of zero or of gigabytes.
  if (s.l1d < 8 * 1024 || s.l1d > 1024 * 1024 || s.l2 < 64 * 1024 || s.l2 > 64 * 1024 * 1024) s = CacheSizes{};
  return s;
}

}  // namespace

const CacheSizes& cache_sizes() {
  static const CacheSizes sizes = detect();
  return sizes;
}

}  // namespace rungs::backend::cpu
