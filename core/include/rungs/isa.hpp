// SPDX-License-Identifier: Apache-2.0
// rungs/isa.hpp: which instruction set Device::Cpu runs at, as the kernels decide it.
//
// Natively the CPU backend has kernels for avx512f (used only when the CPU has AVX-512 F, CD, DQ
// and BW and the OS saves the registers), avx2 (with FMA) and sse4.2, chosen at run time; the wasm
// build has one SIMD128 variant. "scalar" (the reference loops) runs everywhere.
#pragma once

#include <string>
#include <vector>

namespace rungs {

// The ISA Device::Cpu's kernels dispatch to on this machine: "avx512f", "avx2", "sse4.2", "wasm"
// or "scalar" (what CompileReport::isa says of a graph compiled now).
std::string cpu_isa();
// The ISAs this build has kernels for and this machine can run, best first, "scalar" last.
std::vector<std::string> available_isas();

}  // namespace rungs
