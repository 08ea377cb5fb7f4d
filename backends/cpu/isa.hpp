// SPDX-License-Identifier: Apache-2.0
// backends/cpu/isa.hpp: the instruction sets the CPU backend is built for, and which one runs.
//
// Every vector kernel is written once as a template over xsimd::batch<float, Arch> and explicitly
// instantiated in one translation unit per ISA (<family>_<isa>.cpp, generated from the ISA table in
// cmake/RungsIsa.cmake), each compiled with only that ISA's flags. Natively: sse4.2, avx2 (+fma)
// and avx512f, chosen at run time from what the CPU *and OS* support
// (xsimd::available_architectures()). In wasm there is one instantiation, simd128, chosen at
// compile time.
#pragma once

#include <string_view>
#include <vector>

namespace rungs::backend::cpu {

enum class Isa { Scalar, Sse42, Avx2, Avx512, Wasm };

std::string_view isa_name(Isa isa);  // "scalar", "sse4.2", "avx2", "avx512f", "wasm"
// ISAs this build has kernels for and this machine can run, best first.
std::vector<Isa> available_isas();
// The ISA kernels dispatch to: the best available, unless forced (tests force each in turn) or
// named by the environment variable RUNGS_ISA (avx512f, avx2, sse4.2, scalar: one this machine
// has; another name makes this throw Error(InvalidArgument) listing the available ones).
Isa active_isa();
// Force an ISA (must be available) or, with Isa::Scalar... restore with reset_forced_isa().
// Kernels created after the call use it; existing compiled graphs keep theirs.
void force_isa(Isa isa);
void reset_forced_isa();

}  // namespace rungs::backend::cpu
