// SPDX-License-Identifier: Apache-2.0
// The attention kernel instantiated for avx512 (compiled with only its flags: rungs_isa_source).
#include "backends/cpu/attention/attention_kernel.hpp"

namespace rungs::backend::cpu {
template std::unique_ptr<Kernel> make_attention_for<ArchAvx512>(const KernelSpec&);
}
