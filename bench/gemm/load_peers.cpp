// SPDX-License-Identifier: Apache-2.0
// Loads bench/gemm's per-ISA peer modules (native_peers.hpp).
#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/gemm/native_peers.hpp"

namespace rungs::bench {

namespace {
const char* module_suffix(backend::cpu::Isa isa) {
  switch (isa) {
    case backend::cpu::Isa::Avx512: return "avx512";
    case backend::cpu::Isa::Avx2: return "avx2";
    default: return "sse42";
  }
}
}  // namespace

const char* openblas_coretype(backend::cpu::Isa isa) {
  switch (isa) {
    case backend::cpu::Isa::Avx512: return "SkylakeX";
    case backend::cpu::Isa::Avx2: return "Haswell";
    default: return "Nehalem";
  }
}

NativePeers load_native_peers(backend::cpu::Isa isa) {
  char exe[PATH_MAX];
  const ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  std::string dir = len > 0 ? std::string(exe, static_cast<size_t>(len)) : std::string("./x");
  dir.resize(dir.rfind('/') + 1);
  const std::string path = dir + "librungs_gemm_peers_" + module_suffix(isa) + ".so";
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    std::fprintf(stderr, "cannot load the %s peers: %s\n", module_suffix(isa), dlerror());
    std::exit(1);
  }
  auto fill = reinterpret_cast<void (*)(void**)>(dlsym(handle, "rungs_gemm_peers"));
  if (fill == nullptr) {
    std::fprintf(stderr, "%s has no rungs_gemm_peers\n", path.c_str());
    std::exit(1);
  }
  void* table[4];
  fill(table);
  return NativePeers{reinterpret_cast<void (*)(const float*, const float*, float*, int, int, int)>(table[0]),
                     reinterpret_cast<float (*)(int64_t)>(table[1]), reinterpret_cast<int64_t (*)()>(table[2]),
                     reinterpret_cast<const char* (*)()>(table[3])};
}

}  // namespace rungs::bench
