// SPDX-License-Identifier: Apache-2.0
// core/compile/kernel_params.hpp: what a backend is told about one node of the IR.
//
// The backends never see the IR (docs/architecture.md): the compiler turns each node into a
// backend::KernelParams (its op, compiled dims, input sources and its family's parameters) and
// hands that to make_cpu_kernel / make_reference_kernel.
#pragma once

#include <cstdint>

#include "backends/kernel.hpp"
#include "core/ir/graph_impl.hpp"
#include "rungs/session.hpp"

namespace rungs::compile {

backend::KernelParams kernel_params(const ir::GraphImpl& g, uint32_t id, PrecisionPolicy policy, int threads);

}  // namespace rungs::compile
