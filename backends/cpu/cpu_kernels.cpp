// make_cpu_kernel: the first family that handles a node at the active ISA, else the reference
// kernel (minimal rows-branch version; the gemm branch owns this file).
#include <array>

#include "backends/cpu/families.hpp"
#include "backends/kernel.hpp"

namespace rungs::backend {

namespace {
using Factory = std::unique_ptr<Kernel> (*)(const KernelSpec&, cpu::Isa);
constexpr std::array<Factory, 6> kFamilies = {
    cpu::make_elementwise_kernel, cpu::make_softmax_kernel, cpu::make_norm_kernel,
    cpu::make_reduce_kernel,      cpu::make_gather_kernel,  cpu::make_attention_kernel,
};
}  // namespace

std::unique_ptr<Kernel> make_cpu_kernel(const KernelSpec& spec) {
  const cpu::Isa isa = cpu::active_isa();
  for (Factory f : kFamilies)
    if (auto k = f(spec, isa)) return k;
  return make_reference_kernel(spec);
}

std::string cpu_isa() { return std::string(cpu::isa_name(cpu::active_isa())); }

}  // namespace rungs::backend
