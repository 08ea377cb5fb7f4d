// SPDX-License-Identifier: Apache-2.0
// Scalar reference attention: per query, the full row of scores, softmax in double (a NaN score
// makes the query's output NaN, as everywhere: docs/numerics.md).
#include <cmath>
#include <limits>
#include <vector>

#include "backends/cpu/attention/attention.hpp"
#include "backends/cpu/rows/vmath.hpp"

namespace rungs::backend::cpu {

void attention_reference(const AttentionParams& p, std::span<const TensorArg> in, float* out) {
  const Dims& qd = in[0].dims;
  // q and k are e wide (heads of dh), v and output rows ev wide (heads of dv); q, k and v rows
  // are qs, ks and vs apart, k and v start ko and vo columns in (packed q | k | v: one tensor).
  const int64_t batch = qd[0], sq = qd[1], sk = in[1].dims[1];
  const int64_t qs = qd[2], ks = in[1].dims[2], vs = in[2].dims[2], pk = p.packed_qk;
  const int64_t e = pk ? pk : qs, ev = pk ? vs - 2 * pk : vs, ko = pk, vo = 2 * pk;
  const int64_t dh = e / p.heads, dv = ev / p.heads;
  const double scale = p.scale ? double(*p.scale) : 1.0 / std::sqrt(double(dh));
  constexpr double kNegInf = -std::numeric_limits<double>::infinity();
  std::vector<double> s(sk);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < p.heads; ++h)
      for (int64_t i = 0; i < sq; ++i) {
        const float* q = in[0].data + (b * sq + i) * qs + h * dh;
        double m = kNegInf;
        bool any = false;
        for (int64_t j = 0; j < sk; ++j) {
          const bool keep = (!p.has_mask || in[3].data[b * sk + j] >= 0.5f) && (!p.causal || j <= i + (sk - sq));
          s[j] = kNegInf;
          if (!keep) continue;
          const float* k = in[1].data + (b * sk + j) * ks + ko + h * dh;
          double dot = 0;
          for (int64_t d = 0; d < dh; ++d) dot += double(q[d]) * k[d];
          s[j] = dot * scale;
          m = vmath::maximum_ref(m, s[j]);
          any = true;
        }
        float* o = out + (b * sq + i) * ev + h * dv;
        for (int64_t d = 0; d < dv; ++d) o[d] = 0.f;
        if (!any) continue;  // every key dropped: zeros
        double sum = 0;
        for (int64_t j = 0; j < sk; ++j) sum += s[j] = s[j] == kNegInf ? 0.0 : std::exp(s[j] - m);
        for (int64_t d = 0; d < dv; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < sk; ++j)
            if (s[j] != 0.0) acc += s[j] * in[2].data[(b * sk + j) * vs + vo + h * dv + d];
          o[d] = sum == 0 ? 0.f : static_cast<float>(acc / sum);  // every kept score -inf: zeros
        }
      }
}

}  // namespace rungs::backend::cpu
