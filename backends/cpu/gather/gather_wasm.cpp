// SPDX-License-Identifier: Apache-2.0
// The gather kernel instantiated for wasm (compiled with only its flags: rungs_isa_source).
#include "backends/cpu/gather/gather_kernel.hpp"

namespace rungs::backend::cpu {
template std::unique_ptr<Kernel> make_gather_for<ArchWasm>(const KernelSpec&);
}
