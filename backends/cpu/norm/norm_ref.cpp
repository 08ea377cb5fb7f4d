// SPDX-License-Identifier: Apache-2.0
// Scalar reference norms (double accumulation).
#include <cmath>
#include <vector>

#include "backends/cpu/norm/norm.hpp"

namespace rungs::backend::cpu {

void norm_reference(const NormParams& p, std::span<const TensorArg> in, float* out, const Dims& out_dims) {
  const int64_t rows = out_dims.rows(), d = out_dims.last();
  const size_t g = p.add ? 2 : 1;
  const float* gamma = in[g].data;
  const float* beta = p.has_beta ? in[g + 1].data : nullptr;
  std::vector<double> x(d);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < d; ++i)
      x[i] = double(in[0].data[r * d + i]) + (p.add ? double(in[1].data[r * d + i]) : 0.0);
    double mean = 0, sq = 0;
    if (!p.rms) {
      for (double v : x) mean += v;
      mean /= double(d);
    }
    for (double v : x) sq += (v - mean) * (v - mean);
    const double inv = 1.0 / std::sqrt(sq / double(d) + p.eps);
    for (int64_t i = 0; i < d; ++i)
      out[r * d + i] = static_cast<float>((x[i] - mean) * inv * gamma[i] + (beta ? beta[i] : 0.f));
  }
}

}  // namespace rungs::backend::cpu
