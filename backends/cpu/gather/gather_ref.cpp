// SPDX-License-Identifier: Apache-2.0
// Scalar reference gather.
#include <algorithm>

#include "backends/cpu/gather/gather.hpp"

namespace rungs::backend::cpu {

void gather_reference(const TensorArg& table, const TensorArg& ids, float* out) {
  const int64_t v = table.dims[0], d = table.dims[1], n = ids.dims.numel();
  for (int64_t i = 0; i < n; ++i) {
    const auto row = gather_row(ids.data[i], v);
    for (int64_t j = 0; j < d; ++j) out[i * d + j] = row ? table.data[*row * d + j] : 0.f;
  }
}

}  // namespace rungs::backend::cpu
