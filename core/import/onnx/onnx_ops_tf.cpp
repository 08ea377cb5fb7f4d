// SPDX-License-Identifier: Apache-2.0
// core/import/onnx/onnx_ops_tf.cpp: the Builder's TensorFlow ops (onnx_builder.hpp).
//
// The TensorFlow ops (kTfDomain) the TF.js frontend hands the builder as they are
// (core/import/tfjs): BatchMatMul with adj_x / adj_y.
#include <algorithm>
#include <numeric>

#include "core/import/onnx/onnx_builder.hpp"

namespace rungs::onnx_import::detail {

// BatchMatMul with adj_x / adj_y: the last two dims transposed first.
void Builder::batch_matmul() {
  auto adj = [&](Value v) {
    const size_t r = graph_->shape(v).size();
    if (r < 2) error(ErrorCode::ShapeMismatch, "BatchMatMul of a rank-" + std::to_string(r) + " value");
    std::vector<int> p(r);
    std::iota(p.begin(), p.end(), 0);
    std::swap(p[r - 2], p[r - 1]);
    return graph_->transpose(v, p);
  };
  Value x = mat(in(0)), y = mat(in(1));
  if (attr_i("adj_x", 0)) x = adj(x);
  if (attr_i("adj_y", 0)) y = adj(y);
  set(0, make_rt(graph_->matmul(x, y), Kind::Float));
}

}  // namespace rungs::onnx_import::detail
