// backends/cpu/families.hpp: the kernel families of the CPU backend.
//
// Each family (backends/cpu/<family>/) exposes one factory. It returns a kernel for the nodes it
// handles at the given ISA and nullptr for every other node; make_cpu_kernel (cpu_kernels.cpp)
// tries them in order and falls back to the scalar reference kernel.
#pragma once

#include <memory>

#include "backends/cpu/isa.hpp"
#include "backends/kernel.hpp"

namespace rungs::backend::cpu {

using KernelFactory = std::unique_ptr<Kernel> (*)(const KernelSpec& spec, Isa isa);

// gemm/: Op::MatMul and Op::FusedMatMul (packed weights, fused epilogue, batched matmul).
std::unique_ptr<Kernel> make_gemm_kernel(const KernelSpec& spec, Isa isa);

}  // namespace rungs::backend::cpu
