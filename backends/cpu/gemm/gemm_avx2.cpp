// SPDX-License-Identifier: Apache-2.0
// The GEMM at avx2 + fma (compiled with only this ISA's flags, see CMakeLists.txt).
#include "backends/cpu/gemm/gemm_impl.hpp"

namespace rungs::backend::cpu::gemm {

IsaGemm isa_gemm_avx2() { return Gemm<xsimd::fma3<xsimd::avx2>>::describe("avx2"); }

}  // namespace rungs::backend::cpu::gemm
