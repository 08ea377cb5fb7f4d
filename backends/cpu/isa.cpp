// SPDX-License-Identifier: Apache-2.0
// backends/cpu/isa.cpp: which instruction set the CPU kernels run at.
#include "backends/cpu/isa.hpp"

#include <atomic>
#include <cstdlib>
#include <string>

#include <xsimd/xsimd.hpp>

#include "core/check.hpp"
#include "rungs/isa.hpp"

namespace rungs::backend::cpu {
namespace {

std::vector<Isa> detect() {
  std::vector<Isa> isas;
#if defined(__EMSCRIPTEN__)
  isas.push_back(Isa::Wasm);  // one SIMD128 instantiation, chosen at compile time
#else
  // available_architectures() checks both CPUID and what the OS saves (XCR0).
  const auto arch = xsimd::available_architectures();
  // The avx512 TUs are compiled with -mavx512{f,cd,dq,bw,vl}; xsimd cannot query VL, which every
  // CPU with BW and DQ has.
  if (arch.avx512f && arch.avx512cd && arch.avx512dq && arch.avx512bw) isas.push_back(Isa::Avx512);
  if (arch.fma3_avx2) isas.push_back(Isa::Avx2);
  if (arch.sse4_2) isas.push_back(Isa::Sse42);
#endif
  isas.push_back(Isa::Scalar);  // the reference kernels run everywhere
  return isas;
}

const std::vector<Isa>& detected() {
  static const std::vector<Isa> isas = detect();
  return isas;
}

constexpr int kNotForced = -1;
std::atomic<int> forced{kNotForced};

// The environment's RUNGS_ISA (read once): the best available ISA unless it names another one
// this machine has. A name that is not available is an error at the first compile, listing the
// choices; an empty or unset variable means the best.
struct EnvChoice {
  Isa isa;
  std::string error;
};
const EnvChoice& env_choice() {
  static const EnvChoice choice = [] {
    const char* env = std::getenv("RUNGS_ISA");
    EnvChoice c{detected().front(), {}};
    if (env == nullptr || *env == '\0') return c;
    const std::string want = env;
    std::string names;
    for (Isa a : detected()) {
      const std::string name(isa_name(a));
      if (want == name || (a == Isa::Avx512 && want == "avx512") || (a == Isa::Sse42 && want == "sse42")) {
        c.isa = a;
        return c;
      }
      names += (names.empty() ? "" : ", ") + name;
    }
    c.error = "RUNGS_ISA=" + want + ": not available on this machine or build (available: " + names + ")";
    return c;
  }();
  return choice;
}

}  // namespace

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::Scalar: return "scalar";
    case Isa::Sse42: return "sse4.2";
    case Isa::Avx2: return "avx2";
    case Isa::Avx512: return "avx512f";
    case Isa::Wasm: return "wasm";
  }
  return "unknown";
}

std::vector<Isa> available_isas() { return detected(); }

Isa active_isa() {
  const int f = forced.load(std::memory_order_acquire);
  if (f != kNotForced) return static_cast<Isa>(f);
  const EnvChoice& env = env_choice();
  if (!env.error.empty()) fail(ErrorCode::InvalidArgument, env.error);
  return env.isa;
}

void force_isa(Isa isa) {
  bool ok = false;
  for (Isa a : detected()) ok = ok || a == isa;
  if (!ok) {
    fail(ErrorCode::InvalidArgument,
         "force_isa: " + std::string(isa_name(isa)) + " is not available on this machine or build");
  }
  forced.store(static_cast<int>(isa), std::memory_order_release);
}

void reset_forced_isa() { forced.store(kNotForced, std::memory_order_release); }

}  // namespace rungs::backend::cpu

namespace rungs {

std::string cpu_isa() { return std::string(backend::cpu::isa_name(backend::cpu::active_isa())); }

std::vector<std::string> available_isas() {
  std::vector<std::string> names;
  for (backend::cpu::Isa isa : backend::cpu::available_isas()) names.emplace_back(backend::cpu::isa_name(isa));
  return names;
}

}  // namespace rungs
