// SPDX-License-Identifier: Apache-2.0
// core/import/onnx/onnx_ops_linalg.cpp: the Builder's linear algebra and norms (onnx_builder.hpp).
//
// Linear algebra and norms: MatMul, Gemm, Softmax, the Reduce* ops (folded when constant) and
// LayerNormalization with its optional Mean and InvStdDev outputs.
#include <algorithm>
#include <cmath>

#include "core/import/onnx/onnx_builder.hpp"

namespace rungs::onnx_import::detail {

void Builder::matmul() {
  const Val& a = in(0);
  const Val& b = in(1);
  if (a.shape.empty() || b.shape.empty()) error(ErrorCode::ShapeMismatch, "MatMul of a scalar");
  Value x = mat(a), y = mat(b);
  Shape out;
  const bool a1 = a.shape.size() == 1, b1 = b.shape.size() == 1;
  if (a1) x = graph_->reshape(x, {1, a.shape[0]});
  if (b1) y = graph_->reshape(y, {b.shape[0], 1});
  Value z = graph_->matmul(x, y);
  Shape zs = graph_->shape(z);
  if (a1 || b1) {
    Shape s(zs.begin(), zs.end() - 2);
    if (!a1) s.push_back(zs[zs.size() - 2]);
    if (!b1) s.push_back(zs.back());
    z = graph_->reshape(z, s);
  }
  set(0, make_rt(z, Kind::Float));
}

void Builder::gemm() {
  Value a = mat(in(0)), b = mat(in(1));
  if (attr_i("transA", 0)) a = graph_->transpose(a, {1, 0});
  if (attr_i("transB", 0)) b = graph_->transpose(b, {1, 0});
  Value y = graph_->matmul(a, b);
  const double alpha = attr_f("alpha", 1.0), beta = attr_f("beta", 1.0);
  if (alpha != 1.0) y = graph_->mul(y, graph_->constant({static_cast<float>(alpha)}, {}));
  if (has_input(2) && beta != 0.0) {
    Value c = mat(in(2));
    if (beta != 1.0) c = graph_->mul(c, graph_->constant({static_cast<float>(beta)}, {}));
    y = graph_->add(y, c);
  }
  set(0, make_rt(y, Kind::Float));
}

void Builder::softmax() {
  const Val& x = in(0);
  const size_t r = x.shape.size();
  const int axis = norm_axis(attr_i("axis", g_.opset >= 13 ? -1 : 1), r);
  Value v = mat(x);
  const Shape& before = x.unreshaped.second;
  if (axis == static_cast<int>(r) - 1 && !before.empty() && before.back() == x.shape.back()) {
    // The softmax of a reshape that keeps the last axis: over the last axis of the value before it.
    const Value y = graph_->softmax(x.unreshaped.first, static_cast<int>(before.size()) - 1);
    Val out = make_rt(graph_->reshape(y, x.shape), Kind::Float);
    out.unreshaped = {y, before};
    return set(0, out);
  }
  if (g_.opset >= 13 || axis == static_cast<int>(r) - 1) {
    return set(0, make_rt(graph_->softmax(v, axis), Kind::Float));
  }
  // Before opset 13: the input is coerced to 2-D at `axis`, the softmax runs over the rest.
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < r; ++i) (static_cast<int>(i) < axis ? outer : inner) *= x.shape[i];
  Value y = graph_->softmax(graph_->reshape(v, {outer, inner}), -1);
  set(0, make_rt(graph_->reshape(y, x.shape), Kind::Float));
}

void Builder::reduce(const std::string& op) {
  const Val& x = in(0);
  std::vector<int64_t> axes;
  if (op == "ReduceSum" && g_.opset >= 13) {
    if (has_input(1)) axes = ints_in(1, "axes");
  } else if (auto a = attr_ints("axes")) {
    axes = *a;
  }
  const bool keep = attr_i("keepdims", 1) != 0;
  if (axes.empty()) {
    if (attr_i("noop_with_empty_axes", 0) != 0) return identity();
    for (size_t i = 0; i < x.shape.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  std::vector<int> ax;
  for (int64_t a : axes) {
    ax.push_back(norm_axis(a, x.shape.size()));
    if (static_cast<size_t>(ax.back()) >= x.shape.size())  // norm_axis lets axis 0 through at rank 0
      error(ErrorCode::ParseError, "axis " + std::to_string(a) + " is out of range for rank " + std::to_string(x.shape.size()));
  }
  if (x.is_const()) return set(0, make_const(fold_reduce(op, x.c, ax, keep)));
  if (op == "ReduceProd") error(ErrorCode::Unsupported, "ReduceProd of a value computed at run time is not supported");
  Value v = mat(x);
  Value y{};
  if (op == "ReduceMean") y = graph_->mean(v, ax, keep);
  else if (op == "ReduceSum") y = graph_->sum(v, ax, keep);
  else if (op == "ReduceMax") y = graph_->max(v, ax, keep);
  else y = graph_->sqrt(graph_->sum(graph_->mul(v, v), ax, keep));
  set(0, make_rt(y, x.kind == Kind::Float || op == "ReduceMean" || op == "ReduceL2" ? Kind::Float : x.kind));
}

// A reduction of a constant (the product of a shape, the largest index, ...).
Tensor Builder::fold_reduce(const std::string& op, const Tensor& x, const std::vector<int>& ax, bool keep) {
  const size_t r = x.shape.size();
  std::vector<bool> red(r, false);
  for (int a : ax) red[static_cast<size_t>(a)] = true;
  Shape kept, out;
  for (size_t i = 0; i < r; ++i) {
    kept.push_back(red[i] ? 1 : x.shape[i]);
    if (!red[i]) out.push_back(x.shape[i]);
    else if (keep) out.push_back(1);
  }
  const Kind kind = op == "ReduceMean" || op == "ReduceL2" ? Kind::Float : x.kind;
  Tensor t = checked_tensor(kind, out);
  const double init = op == "ReduceProd" ? 1.0 : op == "ReduceMax" ? -std::numeric_limits<double>::infinity()
                                                                   : 0.0;
  std::fill(t.v.begin(), t.v.end(), init);
  std::vector<size_t> count(t.v.size(), 0);
  const auto dst = broadcast_index(kept, x.shape);  // the output element each input element folds into
  for (size_t k = 0; k < x.v.size(); ++k) {
    double& acc = t.v[dst[k]];
    const double v = x.v[k];
    if (op == "ReduceProd") acc *= v;
    else if (op == "ReduceMax") acc = std::max(acc, v);
    else if (op == "ReduceL2") acc += v * v;
    else acc += v;
    ++count[dst[k]];
  }
  for (size_t k = 0; k < t.v.size(); ++k) {
    if (op == "ReduceMean") t.v[k] = count[k] ? t.v[k] / static_cast<double>(count[k]) : 0.0;
    if (op == "ReduceL2") t.v[k] = std::sqrt(t.v[k]);
    t.v[k] = round_to(kind, t.v[k]);
  }
  return t;
}

void Builder::layer_norm() {
  const Val& x = in(0);
  const size_t r = x.shape.size();
  const int axis = norm_axis(attr_i("axis", -1), r);
  const auto eps = static_cast<float>(attr_f("epsilon", 1e-5));
  int64_t inner = 1;
  for (size_t i = static_cast<size_t>(axis); i < r; ++i) inner *= x.shape[i];
  Value v = mat(x);
  Value gamma = mat(in(1));
  Value beta = has_input(2) ? mat(in(2)) : graph_->constant(std::vector<float>(static_cast<size_t>(inner), 0.f), {inner});
  if (axis != static_cast<int>(r) - 1) {
    Shape flat(x.shape.begin(), x.shape.begin() + axis);
    flat.push_back(inner);
    v = graph_->reshape(v, flat);
  }
  if (graph_->shape(gamma) != Shape{inner}) gamma = graph_->reshape(gamma, {inner});
  if (graph_->shape(beta) != Shape{inner}) beta = graph_->reshape(beta, {inner});
  Value y = graph_->layer_norm(v, gamma, beta, eps);
  if (axis != static_cast<int>(r) - 1) y = graph_->reshape(y, x.shape);
  set(0, make_rt(y, Kind::Float));
  // The optional Mean and InvStdDev outputs: x.shape[:axis] + [1] * (rank - axis).
  const bool want_mean = node_->outputs.size() > 1 && !node_->outputs[1].empty();
  const bool want_inv = node_->outputs.size() > 2 && !node_->outputs[2].empty();
  if (want_mean || want_inv) {
    Shape reduced(x.shape.begin(), x.shape.begin() + axis);
    reduced.resize(r, 1);
    const Value mean = graph_->mean(v, {-1}, true);
    if (want_mean) set(1, make_rt(graph_->reshape(mean, reduced), Kind::Float));
    if (want_inv) {
      const Value d = graph_->sub(v, mean);
      const Value var = graph_->mean(graph_->mul(d, d), {-1}, true);
      const Value inv = graph_->rsqrt(graph_->add(var, graph_->constant({eps}, {})));
      set(2, make_rt(graph_->reshape(inv, reduced), Kind::Float));
    }
  }
}

}  // namespace rungs::onnx_import::detail
