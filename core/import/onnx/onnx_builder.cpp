// SPDX-License-Identifier: Apache-2.0
// core/import/onnx/onnx_builder.cpp: the Builder's core (onnx_builder.hpp).
//
// build() (the module and its MIR walk), errors and access to inputs and attributes,
// values (constants, weights, runtime values) and the op table (run, dispatch,
// the unsupported-op error with supported_ops()).
#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "core/import/onnx/onnx_builder.hpp"

namespace rungs::onnx_import::detail {

// The ops build() maps (the list docs/onnx.md shows and unsupported-op errors print).
const std::vector<std::string>& supported_ops() {
  static const std::vector<std::string> ops = {
      "Abs", "Add", "And", "Cast", "Clip", "Concat", "Constant", "ConstantOfShape", "Cos", "Div", "Dropout",
      "Equal", "Erf", "Exp", "Expand", "Flatten", "Gather", "GatherND", "Gelu", "Gemm", "Greater",
      "GreaterOrEqual", "Identity", "LayerNormalization", "Less", "LessOrEqual", "Log", "MatMul", "Max", "Min",
      "Mul", "Neg", "NonZero", "Not", "Or", "Pow", "Range", "Reciprocal", "ReduceL2", "ReduceMax", "ReduceMean",
      "ReduceProd", "ReduceSum", "Relu", "Reshape", "ScatterND", "Shape", "Sigmoid", "Sin", "Size", "Slice",
      "Softmax", "Split", "Sqrt", "Squeeze", "Sub", "Tanh", "Transpose", "Unsqueeze", "Where"};
  return ops;
}

std::string join(const std::vector<std::string>& xs) {
  std::string s;
  for (size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + xs[i];
  return s;
}

// Builds the module; the graph's inputs are declared in order.
HirModule Builder::build() {
  HirModule m;
  std::vector<Value> ins;
  for (size_t i = 0; i < g_.inputs.size(); ++i) {
    const Port& p = g_.inputs[i];
    Shape s;
    for (const Dim& d : p.dims) s.push_back(d.value >= 0 ? d.value : symbols_.at(d.symbol));
    check_shape(s, source_ + ": input '" + p.name + "'");
    ins.push_back(m.input(p.name, s));
  }
  std::vector<Value> outs;
  m.mir(
      [&](Graph& graph, std::span<const Value> args) {
        graph_ = &graph;
        for (size_t i = 0; i < g_.inputs.size(); ++i) {
          Val v;
          v.v = args[i];
          v.shape = graph.shape(args[i]);
          v.kind = kind_of(g_.inputs[i].elem_type);
          v.origin = static_cast<int>(i);
          if (auto it = g_.input_min.find(g_.inputs[i].name); it != g_.input_min.end()) v.lo = it->second;
          env_[g_.inputs[i].name] = std::move(v);
        }
        for (const Node& n : g_.nodes) run(n);
        for (const Port& o : g_.outputs) outs.push_back(mat(get(o.name)));
        return outs.empty() ? Value{0} : outs[0];
      },
      ins);
  for (size_t i = 0; i < g_.outputs.size(); ++i) m.output(g_.outputs[i].name, outs[i]);
  return m;
}

void Builder::error(ErrorCode code, const std::string& what) const {
  fail(code, source_ + ": node '" + node_->name + "' (" + node_->op + "): " + what);
}

const Val& Builder::get(const std::string& name) {
  if (auto it = env_.find(name); it != env_.end()) return it->second;
  if (auto it = g_.constants.find(name); it != g_.constants.end()) {
    Val v;
    v.where = Val::Where::Const;
    v.c = it->second;
    v.shape = v.c.shape;
    v.kind = v.c.kind;
    return env_[name] = std::move(v);
  }
  if (auto it = g_.weights.find(name); it != g_.weights.end()) {
    Val v;
    v.where = Val::Where::Weight;
    v.weight = name;
    v.shape = it->second;
    v.c.shape = it->second;
    return env_[name] = std::move(v);
  }
  fail(ErrorCode::Internal, "onnx: value '" + name + "' used before it is defined");
  return env_.begin()->second;
}

const Val& Builder::in(size_t i) {
  if (!has_input(i)) error(ErrorCode::ParseError, "input " + std::to_string(i) + " is missing");
  return get(node_->inputs[i]);
}

void Builder::set(size_t i, Val v) {
  if (node_->outputs.size() <= i || node_->outputs[i].empty()) return;
  env_[node_->outputs[i]] = std::move(v);
}

const Attr* Builder::attr(const std::string& name) const {
  auto it = node_->attrs.find(name);
  return it == node_->attrs.end() ? nullptr : &it->second;
}

int64_t Builder::attr_i(const std::string& name, int64_t def) const {
  const Attr* a = attr(name);
  return a ? a->i : def;
}

double Builder::attr_f(const std::string& name, double def) const {
  const Attr* a = attr(name);
  return a ? a->f : def;
}

std::optional<std::vector<int64_t>> Builder::attr_ints(const std::string& name) const {
  const Attr* a = attr(name);
  if (!a) return std::nullopt;
  return a->ints;
}

// A constant input's values (a shape, axes, starts...): an input computed from the model's
// inputs at run time is an error naming the node.
const Tensor& Builder::const_in(size_t i, const char* what) {
  const Val& v = in(i);
  if (!v.is_const()) {
    error(ErrorCode::Unsupported, std::string("input '") + what + "' ('" + node_->inputs[i] +
                                      "') is data-dependent: it is computed from the model's inputs at run time, "
                                      "and rungs needs it constant once the symbolic dims are bound");
  }
  return v.c;
}

std::vector<int64_t> Builder::ints_in(size_t i, const char* what) {
  const Tensor& t = const_in(i, what);
  std::vector<int64_t> out;
  for (double d : t.v) out.push_back(int_of(d, what));
  return out;
}

int64_t Builder::int_of(double d, const char* what) const {
  const std::optional<int64_t> i = to_int64(d);
  if (!i) error(ErrorCode::ParseError, std::string("input '") + what + "' holds NaN where an integer is needed");
  return *i;
}

int Builder::norm_axis(int64_t axis, size_t rank) const {
  const auto r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= std::max<int64_t>(r, 1)) {
    error(ErrorCode::ParseError, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  return static_cast<int>(axis < 0 ? axis + r : axis);
}

Val Builder::make_const(Tensor t) {
  Val v;
  v.where = Val::Where::Const;
  v.shape = t.shape;
  v.kind = t.kind;
  v.c = std::move(t);
  return v;
}

Val Builder::make_rt(Value x, Kind kind, int origin) const {
  Val v;
  v.v = x;
  v.shape = graph_->shape(x);
  v.kind = kind;
  v.origin = origin;
  return v;
}

Value Builder::mat(const Val& v) {
  switch (v.where) {
    case Val::Where::Runtime: return v.v;
    case Val::Where::Weight: {
      auto it = params_.find(v.weight);
      if (it != params_.end()) return it->second;
      return params_[v.weight] = graph_->param(v.weight, v.shape);
    }
    case Val::Where::Const: {
      std::vector<float> data(v.c.v.begin(), v.c.v.end());
      return graph_->constant(std::move(data), v.c.shape);
    }
  }
  return v.v;
}

Tensor Builder::checked_tensor(Kind kind, Shape shape) const {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || d > kMaxDim || (d != 0 && n > kMaxFoldElements / d)) {
      error(ErrorCode::OutOfRange, "the constant it computes, " + shape_to_string(shape) + ", is past the limit of " +
                                       std::to_string(kMaxFoldElements) + " values");
    }
    n *= d;
  }
  Tensor t;
  t.kind = kind;
  t.shape = std::move(shape);
  t.v.resize(static_cast<size_t>(n));
  return t;
}

double Builder::round_to(Kind kind, double x) {
  switch (kind) {
    case Kind::Float: return static_cast<double>(static_cast<float>(x));
    case Kind::Int: return std::trunc(x);
    case Kind::Bool: return x != 0 ? 1 : 0;
  }
  return x;
}

bool Builder::all_const(size_t first) {
  for (size_t i = first; i < node_->inputs.size(); ++i)
    if (has_input(i) && !get(node_->inputs[i]).is_const()) return false;
  return true;
}

Tensor Builder::fold_binary(const Tensor& a, const Tensor& b, Kind kind, const std::function<double(double, double)>& f) {
  Tensor t = checked_tensor(kind, broadcast(a.shape, b.shape, source_ + ": node '" + node_->name + "'"));
  const auto ia = broadcast_index(a.shape, t.shape), ib = broadcast_index(b.shape, t.shape);
  for (size_t k = 0; k < t.v.size(); ++k) t.v[k] = round_to(kind, f(a.v[ia[k]], b.v[ib[k]]));
  return t;
}

Tensor Builder::reshaped(Tensor t, Shape s) {
  t.shape = std::move(s);
  return t;
}

Shape Builder::broadcast_shape(const Shape& a, const Shape& b) {
  try {
    return broadcast(a, b, "broadcast");
  } catch (const Error& e) {
    error(ErrorCode::ShapeMismatch, e.what());
  }
}

void Builder::run(const Node& n) {
  node_ = &n;
  if (!n.domain.empty() && n.domain != kTfDomain) unsupported();
  try {
    dispatch(n.op);
  } catch (const Error& e) {
    const std::string msg = e.what();
    if (msg.rfind(source_ + ":", 0) == 0) throw;  // already names the node
    error(e.code(), msg);
  }
}

void Builder::unsupported() const {
  error(ErrorCode::Unsupported, "op " + (node_->domain.empty() ? "" : node_->domain + ".") + node_->op +
                                    " (opset " + std::to_string(g_.opset) +
                                    ") is not supported; the supported ops are: " + join(supported_ops()));
}

void Builder::dispatch(const std::string& op) {
  using F2 = std::function<double(double, double)>;
  static const std::map<std::string, F2> arith = {
      {"Add", [](double a, double b) { return a + b; }},
      {"Sub", [](double a, double b) { return a - b; }},
      {"Mul", [](double a, double b) { return a * b; }},
      {"Div", [](double a, double b) { return a / b; }},
      {"Max", [](double a, double b) { return std::max(a, b); }},
      {"Min", [](double a, double b) { return std::min(a, b); }},
      {"Pow", [](double a, double b) { return std::pow(a, b); }},
  };
  static const std::map<std::string, F2> compare = {
      {"Equal", [](double a, double b) { return a == b ? 1.0 : 0.0; }},
      {"Less", [](double a, double b) { return a < b ? 1.0 : 0.0; }},
      {"Greater", [](double a, double b) { return a > b ? 1.0 : 0.0; }},
      {"LessOrEqual", [](double a, double b) { return a <= b ? 1.0 : 0.0; }},
      {"GreaterOrEqual", [](double a, double b) { return a >= b ? 1.0 : 0.0; }},
      {"And", [](double a, double b) { return a != 0 && b != 0 ? 1.0 : 0.0; }},
      {"Or", [](double a, double b) { return a != 0 || b != 0 ? 1.0 : 0.0; }},
  };
  if (auto it = arith.find(op); it != arith.end()) return binary(op, it->second);
  if (auto it = compare.find(op); it != compare.end()) return comparison(op, it->second);
  if (op == "Identity" || op == "Dropout") return identity();
  if (op == "Constant") return constant();
  if (op == "Shape") return shape_op();
  if (op == "Size") {
    Tensor t = checked_tensor(Kind::Int, {});
    t.v[0] = static_cast<double>(shape_numel(in(0).shape));
    return set(0, make_const(std::move(t)));
  }
  if (op == "ConstantOfShape") return constant_of_shape();
  if (op == "Range") return range();
  if (op == "Cast") return cast();
  if (op == "Reshape") return reshape_op();
  if (op == "Unsqueeze" || op == "Squeeze" || op == "Flatten") return reshape_like(op);
  if (op == "Transpose") return transpose();
  if (op == "Concat") return concat();
  if (op == "Gather") return gather();
  if (op == "Slice") return slice();
  if (op == "Split") return split();
  if (op == "Expand") return expand();
  if (op == "Where") return where_op();
  if (op == "Not") return not_op();
  if (op == "MatMul") return matmul();
  if (op == "Gemm") return gemm();
  if (op == "Softmax") return softmax();
  if (op == "ReduceMean" || op == "ReduceSum" || op == "ReduceMax" || op == "ReduceL2") return reduce(op);
  if (op == "LayerNormalization") return layer_norm();
  if (op == "Clip") return clip();
  if (op == "Gelu") return gelu();
  if (node_->domain == kTfDomain) {
    if (op == "BatchMatMul") return batch_matmul();
    unsupported();
  }
  if (op == "NonZero") return non_zero();
  if (op == "ScatterND") return scatter_nd();
  if (op == "GatherND") return gather_nd();
  if (op == "ReduceProd") return reduce(op);
  static const std::set<std::string> unary = {"Sqrt", "Reciprocal", "Neg", "Exp", "Log", "Erf", "Tanh",
                                              "Sigmoid", "Relu", "Abs", "Sin", "Cos", "Rsqrt"};
  if (unary.count(op)) return unary_op(op);
  unsupported();
}

}  // namespace rungs::onnx_import::detail
