// SPDX-License-Identifier: Apache-2.0
// The reduce kernel instantiated for sse42 (compiled with only its flags: rungs_isa_source).
#include "backends/cpu/reduce/reduce_kernel.hpp"

namespace rungs::backend::cpu {
template std::unique_ptr<Kernel> make_reduce_for<ArchSse42>(const KernelSpec&);
}
