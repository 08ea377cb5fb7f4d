// SPDX-License-Identifier: Apache-2.0
// backends/cpu/cache_sizes.hpp: the data cache sizes of the core the kernels run on, for blocking.
//
// Read once from CPUID (leaf 4 on Intel, 0x8000001D on AMD: the deterministic cache parameters,
// which hypervisors pass through; on AMD without topology extensions, which some hypervisors hide,
// the older 0x80000005 / 0x80000006 leaves), else from the C library (sysconf), else the defaults
// below, which are also what wasm gets (the host's caches are not visible there).
#pragma once

#include <cstdint>

namespace rungs::backend::cpu {

struct CacheSizes {
  int64_t l1d = 32 * 1024;         // per core
  int64_t l2 = 512 * 1024;         // per core (shared by its hyper-threads)
  const char* source = "default";  // "cpuid", "sysconf" or "default"
};

const CacheSizes& cache_sizes();

// AMD's legacy cache leaves: ECX of 0x80000005 holds the L1 data cache's size in KiB in bits
// 31-24, ECX of 0x80000006 the L2's in bits 31-16. False (and `out` unchanged) when either is 0.
bool decode_amd_legacy_leaves(uint32_t ecx_80000005, uint32_t ecx_80000006, CacheSizes& out);

}  // namespace rungs::backend::cpu
