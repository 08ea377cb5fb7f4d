// SPDX-License-Identifier: Apache-2.0
// backends/cpu/rows/arch.hpp: which xsimd arch each Isa instantiates, and the dispatch from a
// run-time Isa to a kernel factory instantiated per arch.
//
// A row-kernel family declares `template <class Arch> std::unique_ptr<Kernel> make_<family>_for(
// const KernelSpec&)`, defines it in its kernel header, and instantiates it explicitly in one TU per
// ISA (<family>_<isa>.cpp, compiled by rungs_isa_source with only that ISA's flags). Its
// `make_<family>_kernel(spec, isa)` calls dispatch_isa(isa, maker): the only place the Isa enum
// meets the arch types. Isa::Scalar yields nullptr (the executor falls back to the reference).
#pragma once

#include <memory>

#include <xsimd/xsimd.hpp>

#include "backends/cpu/isa.hpp"
#include "backends/kernel.hpp"

namespace rungs::backend::cpu {

using ArchSse42 = xsimd::sse4_2;
using ArchAvx2 = xsimd::fma3<xsimd::avx2>;
using ArchAvx512 = xsimd::avx512f;
using ArchWasm = xsimd::wasm;

// maker is a generic lambda `[&]<class Arch>() -> std::unique_ptr<Kernel>`.
template <class Maker>
std::unique_ptr<Kernel> dispatch_isa(Isa isa, Maker&& maker) {
#if defined(__EMSCRIPTEN__)
  if (isa == Isa::Wasm) return maker.template operator()<ArchWasm>();
#else
  switch (isa) {
    case Isa::Sse42: return maker.template operator()<ArchSse42>();
    case Isa::Avx2: return maker.template operator()<ArchAvx2>();
    case Isa::Avx512: return maker.template operator()<ArchAvx512>();
    default: break;
  }
#endif
  return nullptr;
}

// Lowercase ISA name of an arch, for Kernel::describe().
template <class Arch>
constexpr const char* arch_label() {
  if constexpr (std::is_same_v<Arch, ArchAvx2>) return "avx2";
  else if constexpr (std::is_same_v<Arch, ArchSse42>) return "sse4.2";
  else return Arch::name();
}

}  // namespace rungs::backend::cpu
