// SPDX-License-Identifier: Apache-2.0
// The GEMM at wasm (compiled with only this ISA's flags, see CMakeLists.txt).
#include "backends/cpu/gemm/gemm_impl.hpp"

namespace rungs::backend::cpu::gemm {

IsaGemm isa_gemm_wasm() { return Gemm<xsimd::wasm>::describe("wasm"); }

}  // namespace rungs::backend::cpu::gemm
