// SPDX-License-Identifier: Apache-2.0
// The softmax kernel instantiated for sse42 (compiled with only its flags: rungs_isa_source).
#include "backends/cpu/softmax/softmax_kernel.hpp"

namespace rungs::backend::cpu {
template std::unique_ptr<Kernel> make_softmax_for<ArchSse42>(const KernelSpec&);
}
