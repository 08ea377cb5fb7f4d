// SPDX-License-Identifier: Apache-2.0
// The GEMM at sse4.2 (compiled with only this ISA's flags, see CMakeLists.txt).
#include "backends/cpu/gemm/gemm_impl.hpp"

namespace rungs::backend::cpu::gemm {

IsaGemm isa_gemm_sse42() { return Gemm<xsimd::sse4_2>::describe("sse4.2"); }

}  // namespace rungs::backend::cpu::gemm
