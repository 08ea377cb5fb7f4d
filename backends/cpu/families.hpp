// backends/cpu/families.hpp: the kernel families of the CPU backend. Each factory returns nullptr
// for a node it does not handle (minimal rows-branch version; the gemm branch owns this file).
#pragma once

#include <memory>

#include "backends/cpu/isa.hpp"
#include "backends/kernel.hpp"

namespace rungs::backend::cpu {

std::unique_ptr<Kernel> make_elementwise_kernel(const KernelSpec& spec, Isa isa);
std::unique_ptr<Kernel> make_softmax_kernel(const KernelSpec& spec, Isa isa);
std::unique_ptr<Kernel> make_norm_kernel(const KernelSpec& spec, Isa isa);
std::unique_ptr<Kernel> make_reduce_kernel(const KernelSpec& spec, Isa isa);
std::unique_ptr<Kernel> make_gather_kernel(const KernelSpec& spec, Isa isa);
std::unique_ptr<Kernel> make_attention_kernel(const KernelSpec& spec, Isa isa);

}  // namespace rungs::backend::cpu
