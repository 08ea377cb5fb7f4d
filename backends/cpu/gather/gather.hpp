// SPDX-License-Identifier: Apache-2.0
// backends/cpu/gather/gather.hpp: rows of a [V, D] table at float ids (an embedding lookup).
//
// out has shape ids.shape + [D]. An id is rounded to the nearest integer (ties to even, as
// std::nearbyint); an id outside [0, V), or NaN, yields a row of zeros (never a clamp, never a read
// outside the table). When the table is a Param the kernel owns it (owns_weight / set_weight) in
// the policy's format: f32, or bf16 / f16 at half the memory, widened to f32 row by row on the fly.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "backends/cpu/isa.hpp"
#include "backends/kernel.hpp"

namespace rungs::backend::cpu {

// The table row an id selects, or nullopt (zeros) when it is NaN or outside [0, rows).
std::optional<int64_t> gather_row(float id, int64_t rows);
// Reference: table (f32, already rounded through the storage format) and ids.
void gather_reference(const TensorArg& table, const TensorArg& ids, float* out);

template <class Arch>
std::unique_ptr<Kernel> make_gather_for(const KernelParams& params);
std::unique_ptr<Kernel> make_gather_kernel(const KernelParams& params, Isa isa);

}  // namespace rungs::backend::cpu
