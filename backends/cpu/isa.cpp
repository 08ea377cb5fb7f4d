// Minimal ISA selection (rows branch; the gemm branch owns the full version of this file).
#include "backends/cpu/isa.hpp"

#include <atomic>

#include <xsimd/xsimd.hpp>

#include "core/check.hpp"

namespace rungs::backend::cpu {
namespace {
std::atomic<int> g_forced{-1};
}

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::Sse42: return "sse4.2";
    case Isa::Avx2: return "avx2";
    case Isa::Avx512: return "avx512f";
    case Isa::Wasm: return "wasm";
    default: return "scalar";
  }
}

std::vector<Isa> available_isas() {
#if defined(__EMSCRIPTEN__)
  return {Isa::Wasm};
#else
  const auto have = xsimd::available_architectures();
  std::vector<Isa> out;
  if (have.avx512f) out.push_back(Isa::Avx512);
  if (have.fma3_avx2) out.push_back(Isa::Avx2);
  if (have.sse4_2) out.push_back(Isa::Sse42);
  return out;
#endif
}

Isa active_isa() {
  const int f = g_forced.load();
  if (f >= 0) return static_cast<Isa>(f);
  static const Isa best = [] {
    auto all = available_isas();
    return all.empty() ? Isa::Scalar : all.front();
  }();
  return best;
}

void force_isa(Isa isa) {
  bool ok = isa == Isa::Scalar;
  for (Isa a : available_isas()) ok = ok || a == isa;
  internal_check(ok, "force_isa: ISA not available on this machine");
  g_forced.store(static_cast<int>(isa));
}

void reset_forced_isa() { g_forced.store(-1); }

}  // namespace rungs::backend::cpu
