// SPDX-License-Identifier: Apache-2.0
// The GEMM at avx512f (compiled with only this ISA's flags, see CMakeLists.txt).
#include "backends/cpu/gemm/gemm_impl.hpp"

namespace rungs::backend::cpu::gemm {

IsaGemm isa_gemm_avx512() { return Gemm<xsimd::avx512f>::describe("avx512f"); }

}  // namespace rungs::backend::cpu::gemm
