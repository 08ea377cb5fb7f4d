// SPDX-License-Identifier: Apache-2.0
// Scalar reference attention: per query, the full row of scores, softmax in double.
#include <cmath>
#include <limits>
#include <vector>

#include "backends/cpu/attention/attention.hpp"

namespace rungs::backend::cpu {

void attention_reference(const AttentionParams& p, std::span<const TensorArg> in, float* out) {
  const Dims& qd = in[0].dims;
  const int64_t batch = qd[0], sq = qd[1], e = qd[2], sk = in[1].dims[1];
  const int64_t dh = e / p.heads;
  const double scale = p.scale ? double(*p.scale) : 1.0 / std::sqrt(double(dh));
  std::vector<double> s(sk);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < p.heads; ++h)
      for (int64_t i = 0; i < sq; ++i) {
        const float* q = in[0].data + (b * sq + i) * e + h * dh;
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < sk; ++j) {
          const bool keep = (!p.has_mask || in[3].data[b * sk + j] >= 0.5f) && (!p.causal || j <= i + (sk - sq));
          s[j] = -std::numeric_limits<double>::infinity();
          if (!keep) continue;
          const float* k = in[1].data + (b * sk + j) * e + h * dh;
          double dot = 0;
          for (int64_t d = 0; d < dh; ++d) dot += double(q[d]) * k[d];
          s[j] = dot * scale;
          m = std::max(m, s[j]);
        }
        float* o = out + (b * sq + i) * e + h * dh;
        for (int64_t d = 0; d < dh; ++d) o[d] = 0.f;
        if (m == -std::numeric_limits<double>::infinity()) continue;
        double sum = 0;
        for (int64_t j = 0; j < sk; ++j) sum += s[j] = std::exp(s[j] - m);
        for (int64_t d = 0; d < dh; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < sk; ++j) acc += s[j] * in[2].data[(b * sk + j) * e + h * dh + d];
          o[d] = static_cast<float>(acc / sum);
        }
      }
}

}  // namespace rungs::backend::cpu
