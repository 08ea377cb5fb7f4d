// SPDX-License-Identifier: Apache-2.0
// backends/cpu/cpu_kernels.cpp: Device::Cpu picks a vector kernel per node.
#include <array>

#include "backends/cpu/families.hpp"
#include "backends/cpu/isa.hpp"
#include "backends/kernel.hpp"

namespace rungs::backend {
namespace {

// One line per family; the first factory that accepts a node wins.
constexpr std::array<cpu::KernelFactory, 7> kFamilies = {
    &cpu::make_gemm_kernel,   &cpu::make_elementwise_kernel, &cpu::make_softmax_kernel,
    &cpu::make_norm_kernel,   &cpu::make_reduce_kernel,      &cpu::make_gather_kernel,
    &cpu::make_attention_kernel,
};

}  // namespace

std::unique_ptr<Kernel> make_cpu_kernel(const KernelSpec& spec) {
  const cpu::Isa isa = cpu::active_isa();
  if (isa != cpu::Isa::Scalar) {
    for (cpu::KernelFactory factory : kFamilies) {
      if (auto kernel = factory(spec, isa)) return kernel;
    }
  }
  return make_reference_kernel(spec);
}

}  // namespace rungs::backend
