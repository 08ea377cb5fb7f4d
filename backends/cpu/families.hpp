// SPDX-License-Identifier: Apache-2.0
// backends/cpu/families.hpp: the kernel families of the CPU backend.
//
// Each family (backends/cpu/<family>/) exposes one factory. It returns a kernel for the nodes it
// handles at the given ISA and nullptr for every other node; make_cpu_kernel (cpu_kernels.cpp)
// tries them in order and falls back to the scalar reference kernel. cpu_coverage() declares, for
// every op, which of the two it gets (checked by cpu_kernels_test.cpp).
#pragma once

#include <memory>

#include "backends/cpu/isa.hpp"
#include "backends/kernel.hpp"

namespace rungs::backend::cpu {

using KernelFactory = std::unique_ptr<Kernel> (*)(const KernelParams& params, Isa isa);

// gemm/: Op::MatMul and Op::FusedMatMul (packed weights, fused epilogue, batched matmul).
std::unique_ptr<Kernel> make_gemm_kernel(const KernelParams& params, Isa isa);

// Row kernels (docs/row-kernels.md).
// elementwise/: unary and binary ops with broadcasting, Op::FusedElementwise programs.
std::unique_ptr<Kernel> make_elementwise_kernel(const KernelParams& params, Isa isa);
// softmax/: Op::Softmax along any axis.
std::unique_ptr<Kernel> make_softmax_kernel(const KernelParams& params, Isa isa);
// norm/: Op::LayerNorm, Op::RmsNorm, Op::FusedAddNorm.
std::unique_ptr<Kernel> make_norm_kernel(const KernelParams& params, Isa isa);
// reduce/: Op::ReduceSum, Op::ReduceMean, Op::ReduceMax over any axes.
std::unique_ptr<Kernel> make_reduce_kernel(const KernelParams& params, Isa isa);
// gather/: Op::Gather (owns a Param table in bf16 / f16 under those policies).
std::unique_ptr<Kernel> make_gather_kernel(const KernelParams& params, Isa isa);
// attention/: Op::Attention (flash-style, heads, causal, key mask).
std::unique_ptr<Kernel> make_attention_kernel(const KernelParams& params, Isa isa);

// How Device::Cpu runs an op: no kernel at all (leaves, and Reshape, an alias of its input), a
// vector kernel from one of the families above on every vector ISA, or the scalar reference kernel
// by declaration (data movement: a copy). Written as a switch without a default in
// cpu_kernels.cpp, so a new Op warns (-Wswitch) until it is given one of the three.
enum class CpuCoverage { NoKernel, Vector, Reference };
CpuCoverage cpu_coverage(ops::Op op);

}  // namespace rungs::backend::cpu
