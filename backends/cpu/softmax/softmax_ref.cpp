// SPDX-License-Identifier: Apache-2.0
// Scalar reference softmax (double accumulation).
#include <cmath>
#include <limits>

#include "backends/cpu/rows/vmath.hpp"
#include "backends/cpu/softmax/softmax.hpp"

namespace rungs::backend::cpu {

void softmax_reference(int axis, const TensorArg& x, float* out) {
  int64_t outer = 1, inner = 1;
  for (int k = 0; k < axis; ++k) outer *= x.dims[k];
  for (int k = axis + 1; k < x.dims.rank; ++k) inner *= x.dims[k];
  const int64_t n = x.dims[axis];
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < inner; ++c) {
      const float* in = x.data + o * n * inner + c;
      float* y = out + o * n * inner + c;
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t a = 0; a < n; ++a) m = vmath::maximum_ref<double>(m, in[a * inner]);
      double s = 0;
      for (int64_t a = 0; a < n; ++a) s += std::exp(double(in[a * inner]) - m);
      for (int64_t a = 0; a < n; ++a) y[a * inner] = static_cast<float>(std::exp(double(in[a * inner]) - m) / s);
    }
  }
}

}  // namespace rungs::backend::cpu
