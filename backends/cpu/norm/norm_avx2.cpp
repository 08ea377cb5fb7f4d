// SPDX-License-Identifier: Apache-2.0
// The norm kernel instantiated for avx2 (compiled with only its flags: rungs_isa_source).
#include "backends/cpu/norm/norm_kernel.hpp"

namespace rungs::backend::cpu {
template std::unique_ptr<Kernel> make_norm_for<ArchAvx2>(const KernelSpec&);
}
