// SPDX-License-Identifier: Apache-2.0
// core/import/onnx/onnx_ops_gather.cpp: the Builder's gather and scatter ops (onnx_builder.hpp).
//
// Indexed gather and scatter: NonZero (of a constant), GatherND and ScatterND, whose constant
// indices become row picks of the flattened data.
#include <algorithm>

#include "core/import/onnx/onnx_builder.hpp"

namespace rungs::onnx_import::detail {

// NonZero of a constant: the [rank, count] positions of its non-zero elements, in order.
void Builder::non_zero() {
  const Tensor& x = const_in(0, "X");
  const size_t r = x.shape.size();
  std::vector<int64_t> hits;
  for (size_t k = 0; k < x.v.size(); ++k)
    if (x.v[k] != 0) hits.push_back(static_cast<int64_t>(k));
  Tensor t = checked_tensor(Kind::Int, {static_cast<int64_t>(r), static_cast<int64_t>(hits.size())});
  for (size_t j = 0; j < hits.size(); ++j) {
    int64_t rest = hits[j];
    for (size_t d = r; d-- > 0;) {
      t.v[d * hits.size() + j] = static_cast<double>(rest % x.shape[d]);
      rest /= x.shape[d];
    }
  }
  set(0, make_const(std::move(t)));
}

// The rows of `data` (its first k dims flattened) that the last axis of constant `indices` [..., k]
// names, checked against the data's shape.
std::vector<int64_t> Builder::nd_rows(const Tensor& indices, const Shape& data, int64_t* k_out) {
  if (indices.shape.empty()) error(ErrorCode::ShapeMismatch, "indices must have rank >= 1");
  const int64_t k = indices.shape.back();
  if (k < 1 || k > static_cast<int64_t>(data.size())) {
    error(ErrorCode::ShapeMismatch, "indices of depth " + std::to_string(k) + " for data " + shape_to_string(data));
  }
  std::vector<int64_t> rows;
  for (size_t q = 0; q < indices.v.size(); q += static_cast<size_t>(k)) {
    int64_t row = 0;
    for (int64_t d = 0; d < k; ++d) {
      int64_t i = int_of(indices.v[q + static_cast<size_t>(d)], "indices");
      const int64_t dim = data[static_cast<size_t>(d)];
      if (i < 0) i += dim;
      if (i < 0 || i >= dim) error(ErrorCode::OutOfRange, "index " + std::to_string(i) + " is outside dim " + std::to_string(d) + " of " + shape_to_string(data));
      row = row * dim + i;
    }
    rows.push_back(row);
  }
  *k_out = k;
  return rows;
}

// rows of a [n, inner] table at constant ids; the table itself when the ids are 0..n-1.
Value Builder::pick_rows(Value table, int64_t n, const std::vector<int64_t>& ids) {
  bool same = static_cast<int64_t>(ids.size()) == n;
  for (size_t i = 0; same && i < ids.size(); ++i) same = ids[i] == static_cast<int64_t>(i);
  if (same) return table;
  std::vector<float> f(ids.begin(), ids.end());
  return graph_->gather(table, graph_->constant(std::move(f), {static_cast<int64_t>(ids.size())}));
}

// GatherND (batch_dims 0) at constant indices: rows of the data with its first k dims flattened.
void Builder::gather_nd() {
  if (attr_i("batch_dims", 0) != 0) error(ErrorCode::Unsupported, "GatherND with batch_dims is not supported");
  const Val& x = in(0);
  int64_t k = 0;
  const std::vector<int64_t> rows = nd_rows(const_in(1, "indices"), x.shape, &k);
  const Tensor& idx = in(1).c;
  Shape out(idx.shape.begin(), idx.shape.end() - 1);
  int64_t n = 1, inner = 1;
  for (size_t d = 0; d < x.shape.size(); ++d) {
    if (static_cast<int64_t>(d) < k) n *= x.shape[d];
    else inner *= x.shape[d], out.push_back(x.shape[d]);
  }
  if (x.is_const()) {
    Tensor t = checked_tensor(x.kind, out);
    size_t w = 0;
    for (int64_t row : rows)
      for (int64_t j = 0; j < inner; ++j) t.v[w++] = x.c.v[static_cast<size_t>(row * inner + j)];
    return set(0, make_const(std::move(t)));
  }
  Value y = pick_rows(graph_->reshape(mat(x), {n, inner}), n, rows);
  Val v = make_rt(y, x.kind, x.origin);
  v.lo = x.lo;
  set(0, reshape_val(v, out));
}

// ScatterND (reduction none) at constant indices: every row of the result is a row of the
// updates or of the data, a gather from both.
void Builder::scatter_nd() {
  const std::string reduction = attr("reduction") ? attr("reduction")->s : "none";
  if (reduction != "none") error(ErrorCode::Unsupported, "ScatterND with reduction '" + reduction + "' is not supported");
  const Val& data = in(0);
  const Val& upd = in(2);
  int64_t k = 0;
  const std::vector<int64_t> rows = nd_rows(const_in(1, "indices"), data.shape, &k);
  int64_t n = 1, inner = 1;
  for (size_t d = 0; d < data.shape.size(); ++d) (static_cast<int64_t>(d) < k ? n : inner) *= data.shape[d];
  const auto q = static_cast<int64_t>(rows.size());
  if (shape_numel(upd.shape) != q * inner) {
    error(ErrorCode::ShapeMismatch, "updates " + shape_to_string(upd.shape) + " do not fit " + std::to_string(q) + " rows of " + shape_to_string(data.shape));
  }
  std::vector<int64_t> src(static_cast<size_t>(n), -1);  // the update row each row takes, -1: the data's
  for (int64_t i = 0; i < q; ++i) {
    if (src[static_cast<size_t>(rows[static_cast<size_t>(i)])] >= 0) error(ErrorCode::Unsupported, "ScatterND writes one row twice");
    src[static_cast<size_t>(rows[static_cast<size_t>(i)])] = i;
  }
  if (data.is_const() && upd.is_const()) {
    Tensor t = data.c;
    t.kind = upd.kind == Kind::Float ? Kind::Float : data.kind;
    for (int64_t r = 0; r < n; ++r)
      if (src[static_cast<size_t>(r)] >= 0)
        for (int64_t j = 0; j < inner; ++j) t.v[static_cast<size_t>(r * inner + j)] = upd.c.v[static_cast<size_t>(src[static_cast<size_t>(r)] * inner + j)];
    return set(0, make_const(std::move(t)));
  }
  const bool covered = std::find(src.begin(), src.end(), -1) == src.end();
  Value table = graph_->reshape(mat(upd), {q, inner});
  double lo = upd.lo;
  std::vector<int64_t> ids;
  for (int64_t r = 0; r < n; ++r) ids.push_back(src[static_cast<size_t>(r)] >= 0 ? src[static_cast<size_t>(r)] : q + r);
  if (!covered) {
    table = graph_->concat({table, graph_->reshape(mat(data), {n, inner})}, 0);
    lo = std::min(lo, data.is_const() ? *std::min_element(data.c.v.begin(), data.c.v.end()) : data.lo);
  }
  Val v = make_rt(pick_rows(table, covered ? q : q + n, ids), upd.kind == Kind::Float ? Kind::Float : data.kind, upd.origin);
  v.lo = lo;
  set(0, reshape_val(v, data.shape));
}

}  // namespace rungs::onnx_import::detail
