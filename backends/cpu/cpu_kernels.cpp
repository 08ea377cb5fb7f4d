// Placeholder until the xsimd kernels land: every op runs its reference kernel.
#include "backends/kernel.hpp"

namespace rungs::backend {

std::unique_ptr<Kernel> make_cpu_kernel(const KernelSpec& spec) { return make_reference_kernel(spec); }
std::string cpu_isa() { return "scalar"; }

}  // namespace rungs::backend
