// SPDX-License-Identifier: Apache-2.0
// The attention kernel instantiated for wasm (compiled with only its flags: rungs_isa_source).
#include "backends/cpu/attention/attention_kernel.hpp"

namespace rungs::backend::cpu {
template std::unique_ptr<Kernel> make_attention_for<ArchWasm>(const KernelSpec&);
}
