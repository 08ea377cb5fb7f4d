// SPDX-License-Identifier: Apache-2.0
// The elementwise kernel instantiated for sse42 (compiled with only its flags: rungs_isa_source).
#include "backends/cpu/elementwise/elementwise_kernel.hpp"

namespace rungs::backend::cpu {
template std::unique_ptr<Kernel> make_elementwise_for<ArchSse42>(const KernelSpec&);
}
