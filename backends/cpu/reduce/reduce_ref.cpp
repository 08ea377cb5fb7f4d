// SPDX-License-Identifier: Apache-2.0
// Scalar reference reductions: every input element added into its output (double accumulation;
// a NaN reaches its max, as everywhere: docs/numerics.md).
#include <cmath>
#include <limits>
#include <vector>

#include "backends/cpu/reduce/reduce.hpp"
#include "backends/cpu/rows/vmath.hpp"

namespace rungs::backend::cpu {

void reduce_reference(ReduceKind kind, std::span<const int64_t> axes, const TensorArg& x, float* out) {
  const Dims& d = x.dims;
  std::vector<uint8_t> red(d.rank, 0);
  for (int64_t a : axes) red[a < 0 ? a + d.rank : a] = 1;
  int64_t outputs = 1, count = 1;
  for (int k = 0; k < d.rank; ++k) (red[k] ? count : outputs) *= d[k];
  const double init = kind == ReduceKind::Max ? -std::numeric_limits<double>::infinity() : 0.0;
  std::vector<double> acc(outputs, init);
  std::vector<int64_t> idx(d.rank, 0);
  for (int64_t e = 0; e < d.numel(); ++e) {
    int64_t rest = e, o = 0;
    for (int k = d.rank - 1; k >= 0; --k) {
      idx[k] = rest % d[k];
      rest /= d[k];
    }
    for (int k = 0; k < d.rank; ++k)
      if (!red[k]) o = o * d[k] + idx[k];
    const double v = x.data[e];
    acc[o] = kind == ReduceKind::Max ? vmath::maximum_ref(acc[o], v) : acc[o] + v;
  }
  for (int64_t o = 0; o < outputs; ++o)
    out[o] = static_cast<float>(kind == ReduceKind::Mean ? acc[o] / double(count) : acc[o]);
}

}  // namespace rungs::backend::cpu
