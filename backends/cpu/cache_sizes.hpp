// SPDX-License-Identifier: Apache-2.0
// backends/cpu/cache_sizes.hpp: the data cache sizes of the core the kernels run on, for blocking.
//
// Read once from CPUID (leaf 4 on Intel, 0x8000001D on AMD: the deterministic cache parameters,
// which hypervisors pass through), else from the C library (sysconf), else the defaults below,
// which are also what wasm gets (the host's caches are not visible there).
#pragma once

#include <cstdint>

namespace rungs::backend::cpu {

struct CacheSizes {
  int64_t l1d = 32 * 1024;         // per core
  int64_t l2 = 512 * 1024;         // per core (shared by its hyper-threads)
  const char* source = "default";  // "cpuid", "sysconf" or "default"
};

const CacheSizes& cache_sizes();

}  // namespace rungs::backend::cpu
