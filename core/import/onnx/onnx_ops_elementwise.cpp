// SPDX-License-Identifier: Apache-2.0
// core/import/onnx/onnx_ops_elementwise.cpp: the Builder's elementwise ops (onnx_builder.hpp).
//
// The elementwise ops: Add, Sub, Mul, Div, Max, Min and Pow (folded when every input is
// constant), the comparisons and And / Or, Not, Where, the unary ops, Gelu and Clip.
#include <algorithm>
#include <cmath>
#include <functional>

#include "core/import/onnx/onnx_builder.hpp"

namespace rungs::onnx_import::detail {

Kind Builder::arith_kind(const Val& a, const Val& b) const {
  return a.kind == Kind::Float || b.kind == Kind::Float ? Kind::Float : Kind::Int;
}

void Builder::binary(const std::string& op, const std::function<double(double, double)>& f) {
  // Max and Min are variadic: fold them pairwise.
  const size_t n = node_->inputs.size();
  if ((op == "Max" || op == "Min") && n == 1) return identity();
  if (n < 2) error(ErrorCode::ParseError, "needs two inputs");
  if (all_const()) {
    Tensor acc = in(0).c;
    for (size_t i = 1; i < n; ++i) {
      const Kind k = arith_kind(make_const(acc), in(i));
      if (op == "Div" && k == Kind::Int) {
        acc = fold_binary(acc, in(i).c, k, [](double a, double b) { return b == 0 ? 0 : std::floor(a / b) == a / b ? a / b
                                                                                                                   : std::trunc(a / b); });
      } else {
        acc = fold_binary(acc, in(i).c, k, f);
      }
    }
    return set(0, make_const(std::move(acc)));
  }
  if (op == "Pow") return pow_op();
  Value acc = mat(in(0));
  Kind kind = in(0).kind;
  for (size_t i = 1; i < n; ++i) {
    const Val& b = in(i);
    if (op == "Div" && kind != Kind::Float && b.kind != Kind::Float) {
      error(ErrorCode::Unsupported, "integer division of values computed at run time is not supported");
    }
    Value y = mat(b);
    broadcast_shape(graph_->shape(acc), b.shape);
    if (op == "Add") acc = graph_->add(acc, y);
    else if (op == "Sub") acc = graph_->sub(acc, y);
    else if (op == "Mul") acc = graph_->mul(acc, y);
    else if (op == "Div") acc = graph_->div(acc, y);
    else if (op == "Max") acc = graph_->maximum(acc, y);
    else acc = graph_->minimum(acc, y);
    kind = kind == Kind::Float || b.kind == Kind::Float ? Kind::Float : Kind::Int;
  }
  set(0, make_rt(acc, kind));
}

void Builder::pow_op() {
  const Val& x = in(0);
  const Val& e = in(1);
  if (e.is_const() && shape_numel(e.shape) == 1) {
    const double p = e.c.v[0];
    Value v = mat(x);
    Value y{};
    if (p == 1) y = v;
    else if (p == 2) y = graph_->mul(v, v);
    else if (p == 3) y = graph_->mul(graph_->mul(v, v), v);
    else if (p == 0.5) y = graph_->sqrt(v);
    else if (p == -0.5) y = graph_->rsqrt(v);
    else if (p == -1) y = graph_->div(graph_->constant({1.f}, {}), v);
    else y = graph_->pow(v, graph_->constant({static_cast<float>(p)}, {}));
    // a [1]-shaped exponent broadcasts the result to at least rank 1
    if (e.shape.size() > x.shape.size()) y = graph_->reshape(y, broadcast_shape(x.shape, e.shape));
    return set(0, make_rt(y, Kind::Float));
  }
  set(0, make_rt(graph_->pow(mat(x), mat(e)), Kind::Float));
}

void Builder::comparison(const std::string& op, const std::function<double(double, double)>& f) {
  if (all_const()) return set(0, make_const(fold_binary(in(0).c, in(1).c, Kind::Bool, f)));
  const Val& a = in(0);
  const Val& b = in(1);
  if (op == "And") return set(0, make_rt(graph_->mul(mat(a), mat(b)), Kind::Bool));
  if (op == "Or") return set(0, make_rt(graph_->maximum(mat(a), mat(b)), Kind::Bool));
  if ((op == "Greater" || op == "GreaterOrEqual") && !a.is_const() && b.is_const() && !b.c.v.empty()) {
    // Decided by a's bound (ids known to be >= 1 compared with the padding id 0): a constant.
    const double hi = *std::max_element(b.c.v.begin(), b.c.v.end());
    if (op == "Greater" ? a.lo > hi : a.lo >= hi) {
      Tensor t = checked_tensor(Kind::Bool, broadcast_shape(a.shape, b.shape));
      std::fill(t.v.begin(), t.v.end(), 1.0);
      return set(0, make_const(std::move(t)));
    }
  }
  const Value x = mat(a), y = mat(b);
  Value z{};
  if (op == "Equal") z = graph_->equal(x, y);
  else if (op == "Less") z = graph_->less(x, y);
  else if (op == "Greater") z = graph_->greater(x, y);
  else if (op == "LessOrEqual") z = graph_->less_equal(x, y);
  else z = graph_->greater_equal(x, y);
  set(0, make_rt(z, Kind::Bool));
}

void Builder::not_op() {
  if (all_const()) {
    Tensor t = in(0).c;
    for (double& x : t.v) x = x == 0 ? 1 : 0;
    t.kind = Kind::Bool;
    return set(0, make_const(std::move(t)));
  }
  set(0, make_rt(graph_->logical_not(mat(in(0))), Kind::Bool));
}

void Builder::where_op() {
  if (all_const()) {
    const Tensor& c = in(0).c;
    const Tensor& a = in(1).c;
    const Tensor& b = in(2).c;
    const Shape s = broadcast_shape(broadcast_shape(c.shape, a.shape), b.shape);
    Tensor t = checked_tensor(a.kind, s);
    const auto ic = broadcast_index(c.shape, s), ia = broadcast_index(a.shape, s), ib = broadcast_index(b.shape, s);
    for (size_t k = 0; k < t.v.size(); ++k) t.v[k] = c.v[ic[k]] != 0 ? a.v[ia[k]] : b.v[ib[k]];
    return set(0, make_const(std::move(t)));
  }
  const Val& a = in(1);
  const Val& b = in(2);
  const Kind kind = a.kind == Kind::Float || b.kind == Kind::Float ? Kind::Float : a.kind;
  set(0, make_rt(graph_->where(mat(in(0)), mat(a), mat(b)), kind));
}

void Builder::unary_op(const std::string& op) {
  const Val& x = in(0);
  if (x.is_const() && (op == "Neg" || op == "Abs" || op == "Sqrt" || op == "Reciprocal")) {
    Tensor t = x.c;
    for (double& v : t.v) {
      v = op == "Neg" ? -v : op == "Abs" ? std::fabs(v)
                         : op == "Sqrt"  ? std::sqrt(v)
                                         : 1.0 / v;
      v = round_to(t.kind == Kind::Int && op != "Neg" && op != "Abs" ? Kind::Float : t.kind, v);
    }
    if (op == "Sqrt" || op == "Reciprocal") t.kind = Kind::Float;
    return set(0, make_const(std::move(t)));
  }
  if (x.is_const() && (op == "Sin" || op == "Cos")) {  // timing signals: folded in f32
    Tensor t = x.c;
    for (double& v : t.v) v = round_to(Kind::Float, op == "Sin" ? std::sin(static_cast<float>(v)) : std::cos(static_cast<float>(v)));
    t.kind = Kind::Float;
    return set(0, make_const(std::move(t)));
  }
  Value v = mat(x);
  Value y{};
  if (op == "Sqrt") y = graph_->sqrt(v);
  else if (op == "Reciprocal") y = graph_->div(graph_->constant({1.f}, {}), v);
  else if (op == "Neg") y = graph_->neg(v);
  else if (op == "Exp") y = graph_->exp(v);
  else if (op == "Log") y = graph_->log(v);
  else if (op == "Tanh") y = graph_->tanh(v);
  else if (op == "Sigmoid") y = graph_->sigmoid(v);
  else if (op == "Relu") y = graph_->relu(v);
  else if (op == "Abs") y = graph_->abs(v);
  else if (op == "Sin") y = graph_->sin(v);
  else if (op == "Cos") y = graph_->cos(v);
  else if (op == "Rsqrt") y = graph_->rsqrt(v);
  else y = graph_->erf(v);
  set(0, make_rt(y, op == "Neg" || op == "Abs" || op == "Relu" ? x.kind : Kind::Float));
}

void Builder::gelu() {
  const std::string approx = attr("approximate") ? attr("approximate")->s : "none";
  Value v = mat(in(0));
  set(0, make_rt(approx == "tanh" ? graph_->gelu_tanh(v) : graph_->gelu(v), Kind::Float));
}

void Builder::clip() {
  const Val& x = in(0);
  std::optional<double> lo, hi;
  if (g_.opset < 11 || attr("min") || attr("max")) {
    if (attr("min")) lo = attr_f("min", 0);
    if (attr("max")) hi = attr_f("max", 0);
  }
  std::optional<Value> lo_v, hi_v;  // bounds computed at run time
  if (has_input(1)) {
    if (in(1).is_const()) lo = in(1).c.v.at(0);
    else lo_v = mat(in(1));
  }
  if (has_input(2)) {
    if (in(2).is_const()) hi = in(2).c.v.at(0);
    else hi_v = mat(in(2));
  }
  if (lo_v || hi_v) {
    Value y = mat(x);
    if (lo_v) y = graph_->maximum(y, *lo_v);
    else if (lo) y = graph_->maximum(y, graph_->constant({static_cast<float>(*lo)}, {}));
    if (hi_v) y = graph_->minimum(y, *hi_v);
    else if (hi) y = graph_->minimum(y, graph_->constant({static_cast<float>(*hi)}, {}));
    return set(0, make_rt(y, x.kind));
  }
  if (x.is_const()) {
    Tensor t = x.c;
    for (double& v : t.v) {
      if (lo) v = std::max(v, *lo);
      if (hi) v = std::min(v, *hi);
    }
    return set(0, make_const(std::move(t)));
  }
  Value y = mat(x);
  if (lo) y = graph_->maximum(y, graph_->constant({static_cast<float>(*lo)}, {}));
  if (hi) y = graph_->minimum(y, graph_->constant({static_cast<float>(*hi)}, {}));
  set(0, make_rt(y, x.kind));
}

}  // namespace rungs::onnx_import::detail
