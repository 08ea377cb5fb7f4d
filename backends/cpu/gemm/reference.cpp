// SPDX-License-Identifier: Apache-2.0
#include "backends/cpu/gemm/reference.hpp"

#include <cmath>
#include <vector>

#include "backends/cpu/rows/vmath.hpp"

namespace rungs::backend::cpu::gemm {

double reference_activation(Activation act, double x) {
  switch (act) {
    case Activation::None: return x;
    case Activation::Relu: return vmath::relu_ref(x);
    case Activation::Gelu: return vmath::gelu_ref(x);
    case Activation::GeluTanh: return vmath::gelu_tanh_ref(x);
    case Activation::Silu: return vmath::silu_ref(x);
    case Activation::Tanh: return std::tanh(x);
    case Activation::Sigmoid: return vmath::sigmoid_ref(x);
  }
  return x;
}

void reference_gemm(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n,
                    const float* bias, Activation act, const float* residual, bool b_transposed) {
  const int64_t row_stride = b_transposed ? 1 : n, col_stride = b_transposed ? k : 1;
  std::vector<double> row(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) row[j] = bias ? bias[j] : 0.0;
    for (int64_t p = 0; p < k; ++p) {
      const double x = a[i * k + p];
      for (int64_t j = 0; j < n; ++j) row[j] += x * b[p * row_stride + j * col_stride];
    }
    for (int64_t j = 0; j < n; ++j) {
      double y = reference_activation(act, row[j]);
      if (residual) y += residual[i * n + j];
      c[i * n + j] = static_cast<float>(y);
    }
  }
}

}  // namespace rungs::backend::cpu::gemm
