// SPDX-License-Identifier: Apache-2.0
// core/import/onnx/onnx_frontend.cpp: the ONNX frontend (docs/onnx.md).
//
// load_onnx reads the file once (onnx_graph.cpp), resolves the symbolic dims (`fix`, the bucket
// dim) and checks the result by building at two probe extents. build(extent) binds the bucket
// symbol and walks the nodes in order with every input's shape known: a node whose inputs are
// all constant and whose op is shape arithmetic is evaluated here (Shape, Gather, Concat, Range,
// ...), so what reaches the Graph is static; every other node maps onto Graph ops.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>
#include <functional>
#include <numeric>
#include <set>

#include "core/check.hpp"
#include "core/import/onnx/onnx_graph.hpp"
#include "core/model/frontend.hpp"

namespace rungs::onnx_import {

namespace {

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

std::string ints_text(const std::vector<int64_t>& xs) { return shape_to_string(xs); }

// A value while building: a constant the frontend knows (folded shape arithmetic, small
// initializers), a weight (a float initializer: a Graph param, never folded) or a Graph value.
struct Val {
  enum class Where { Const, Weight, Runtime } where = Where::Runtime;
  Tensor c;            // Const: the tensor; Weight: its shape only
  std::string weight;  // Weight: the initializer's name
  Value v{};           // Runtime
  Shape shape;         // every kind
  Kind kind = Kind::Float;
  int origin = -1;  // the graph input this value is, through casts and reshapes (-1: none)
  // A bound every element of a runtime value keeps (OnnxGraph::input_min through reshapes, casts,
  // gathers and scatters): a comparison it decides folds to a constant.
  double lo = -std::numeric_limits<double>::infinity();
  // Runtime: the value this one is a reshape of, and its shape (unreshaped.second empty: none),
  // so a reshape back returns it and a softmax over the last axis runs on it (a reshape of a
  // softmax's input into rows and back again, as TF's attention does, would hide the attention
  // from fuse_attention and active extent).
  std::pair<Value, Shape> unreshaped{};
  bool is_const() const { return where == Where::Const; }
};

ElementType element_type(int onnx_type) {
  switch (onnx_type) {
    case kInt64: return ElementType::I64;
    case kInt32: return ElementType::I32;
    case kBool: return ElementType::Bool;
    default: return ElementType::F32;
  }
}

bool batch_like(const std::string& symbol) {
  std::string s;
  for (char c : symbol) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const std::set<std::string> names = {"batch", "batch_size", "batchsize", "n", "b", "bs", "nbatch",
                                              "num_batches", "batch_dim"};
  return names.count(s) > 0;
}

class Builder {
 public:
  Builder(const OnnxGraph& g, const std::string& source, const std::map<std::string, int64_t>& symbols,
          std::vector<model::Frontend::Role>* roles)
      : g_(g), source_(source), symbols_(symbols), roles_(roles) {}

  // Builds the module; the graph's inputs are declared in order.
  HirModule build() {
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

 private:
  const OnnxGraph& g_;
  const std::string& source_;
  const std::map<std::string, int64_t>& symbols_;
  std::vector<model::Frontend::Role>* roles_;
  Graph* graph_ = nullptr;
  std::map<std::string, Val> env_;
  std::map<std::string, Value> params_;  // weight -> its param (created once)
  const Node* node_ = nullptr;

  // ---------------------------------------------------------------- errors and access
  [[noreturn]] void error(ErrorCode code, const std::string& what) const {
    fail(code, source_ + ": node '" + node_->name + "' (" + node_->op + "): " + what);
  }

  const Val& get(const std::string& name) {
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

  bool has_input(size_t i) const { return node_->inputs.size() > i && !node_->inputs[i].empty(); }
  const Val& in(size_t i) {
    if (!has_input(i)) error(ErrorCode::ParseError, "input " + std::to_string(i) + " is missing");
    return get(node_->inputs[i]);
  }
  void set(size_t i, Val v) {
    if (node_->outputs.size() <= i || node_->outputs[i].empty()) return;
    env_[node_->outputs[i]] = std::move(v);
  }
  const Attr* attr(const std::string& name) const {
    auto it = node_->attrs.find(name);
    return it == node_->attrs.end() ? nullptr : &it->second;
  }
  int64_t attr_i(const std::string& name, int64_t def) const {
    const Attr* a = attr(name);
    return a ? a->i : def;
  }
  double attr_f(const std::string& name, double def) const {
    const Attr* a = attr(name);
    return a ? a->f : def;
  }
  std::optional<std::vector<int64_t>> attr_ints(const std::string& name) const {
    const Attr* a = attr(name);
    if (!a) return std::nullopt;
    return a->ints;
  }

  // A constant input's values (a shape, axes, starts...): an input computed from the model's
  // inputs at run time is an error naming the node.
  const Tensor& const_in(size_t i, const char* what) {
    const Val& v = in(i);
    if (!v.is_const()) {
      error(ErrorCode::Unsupported, std::string("input '") + what + "' ('" + node_->inputs[i] +
                                        "') is data-dependent: it is computed from the model's inputs at run time, "
                                        "and rungs needs it constant once the symbolic dims are bound");
    }
    return v.c;
  }
  std::vector<int64_t> ints_in(size_t i, const char* what) {
    const Tensor& t = const_in(i, what);
    std::vector<int64_t> out;
    for (double d : t.v) out.push_back(static_cast<int64_t>(d));
    return out;
  }

  int norm_axis(int64_t axis, size_t rank) const {
    const auto r = static_cast<int64_t>(rank);
    if (axis < -r || axis >= std::max<int64_t>(r, 1)) {
      error(ErrorCode::ParseError, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    }
    return static_cast<int>(axis < 0 ? axis + r : axis);
  }

  // ---------------------------------------------------------------- values
  static Val make_const(Tensor t) {
    Val v;
    v.where = Val::Where::Const;
    v.shape = t.shape;
    v.kind = t.kind;
    v.c = std::move(t);
    return v;
  }
  Val make_rt(Value x, Kind kind, int origin = -1) const {
    Val v;
    v.v = x;
    v.shape = graph_->shape(x);
    v.kind = kind;
    v.origin = origin;
    return v;
  }
  Value mat(const Val& v) {
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
  Tensor checked_tensor(Kind kind, Shape shape) const {
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
  static double round_to(Kind kind, double x) {
    switch (kind) {
      case Kind::Float: return static_cast<double>(static_cast<float>(x));
      case Kind::Int: return std::trunc(x);
      case Kind::Bool: return x != 0 ? 1 : 0;
    }
    return x;
  }
  bool all_const(size_t first = 0) {
    for (size_t i = first; i < node_->inputs.size(); ++i)
      if (has_input(i) && !get(node_->inputs[i]).is_const()) return false;
    return true;
  }

  Tensor fold_binary(const Tensor& a, const Tensor& b, Kind kind, const std::function<double(double, double)>& f) {
    Tensor t = checked_tensor(kind, broadcast(a.shape, b.shape, source_ + ": node '" + node_->name + "'"));
    const auto ia = broadcast_index(a.shape, t.shape), ib = broadcast_index(b.shape, t.shape);
    for (size_t k = 0; k < t.v.size(); ++k) t.v[k] = round_to(kind, f(a.v[ia[k]], b.v[ib[k]]));
    return t;
  }
  Tensor reshaped(Tensor t, Shape s) {
    t.shape = std::move(s);
    return t;
  }

  Shape broadcast_shape(const Shape& a, const Shape& b) {
    try {
      return broadcast(a, b, "broadcast");
    } catch (const Error& e) {
      error(ErrorCode::ShapeMismatch, e.what());
    }
  }

  // ---------------------------------------------------------------- the op table
  void run(const Node& n) {
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

  [[noreturn]] void unsupported() const {
    error(ErrorCode::Unsupported, "op " + (node_->domain.empty() ? "" : node_->domain + ".") + node_->op +
                                      " (opset " + std::to_string(g_.opset) +
                                      ") is not supported; the supported ops are: " + join(supported_ops()));
  }

  void dispatch(const std::string& op) {
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

  // ---------------------------------------------------------------- elementwise
  Kind arith_kind(const Val& a, const Val& b) const {
    return a.kind == Kind::Float || b.kind == Kind::Float ? Kind::Float : Kind::Int;
  }

  void binary(const std::string& op, const std::function<double(double, double)>& f) {
    // Max and Min are variadic: fold them pairwise.
    const size_t n = node_->inputs.size();
    if ((op == "Max" || op == "Min") && n == 1) return identity();
    if (n < 2) error(ErrorCode::ParseError, "needs two inputs");
    if (all_const()) {
      Tensor acc = in(0).c;
      for (size_t i = 1; i < n; ++i) {
        const Kind k = arith_kind(make_const(acc), in(i));
        if (op == "Div" && k == Kind::Int) {
          acc = fold_binary(acc, in(i).c, k, [](double a, double b) { return b == 0 ? 0 : std::floor(a / b) == a / b ? a / b : std::trunc(a / b); });
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

  void pow_op() {
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

  void comparison(const std::string& op, const std::function<double(double, double)>& f) {
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

  void not_op() {
    if (all_const()) {
      Tensor t = in(0).c;
      for (double& x : t.v) x = x == 0 ? 1 : 0;
      t.kind = Kind::Bool;
      return set(0, make_const(std::move(t)));
    }
    set(0, make_rt(graph_->logical_not(mat(in(0))), Kind::Bool));
  }

  void where_op() {
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

  void unary_op(const std::string& op) {
    const Val& x = in(0);
    if (x.is_const() && (op == "Neg" || op == "Abs" || op == "Sqrt" || op == "Reciprocal")) {
      Tensor t = x.c;
      for (double& v : t.v) {
        v = op == "Neg" ? -v : op == "Abs" ? std::fabs(v) : op == "Sqrt" ? std::sqrt(v) : 1.0 / v;
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

  void gelu() {
    const std::string approx = attr("approximate") ? attr("approximate")->s : "none";
    Value v = mat(in(0));
    set(0, make_rt(approx == "tanh" ? graph_->gelu_tanh(v) : graph_->gelu(v), Kind::Float));
  }

  void clip() {
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

  // ---------------------------------------------------------------- constants and shapes
  void identity() {
    if (node_->op == "Dropout") {
      const bool training = has_input(2) && (!in(2).is_const() || in(2).c.v.at(0) != 0);
      if (training || attr_i("is_test", 1) == 0) {
        error(ErrorCode::Unsupported, "Dropout in training mode is not supported (rungs runs inference)");
      }
    }
    Val v = in(0);
    set(0, v);
    if (node_->op == "Dropout" && node_->outputs.size() > 1 && !node_->outputs[1].empty()) {
      Tensor mask = checked_tensor(Kind::Bool, v.shape);
      std::fill(mask.v.begin(), mask.v.end(), 1.0);
      set(1, make_const(std::move(mask)));
    }
  }

  void constant() {
    Tensor t;
    if (const Attr* a = attr("value"); a && a->t) {
      t = *a->t;
    } else if (const Attr* a = attr("value_float")) {
      t = {Kind::Float, {}, {a->f}};
    } else if (const Attr* a = attr("value_int")) {
      t = {Kind::Int, {}, {static_cast<double>(a->i)}};
    } else if (const Attr* a = attr("value_floats")) {
      t = {Kind::Float, {static_cast<int64_t>(a->floats.size())}, a->floats};
    } else if (const Attr* a = attr("value_ints")) {
      t = {Kind::Int, {static_cast<int64_t>(a->ints.size())}, {}};
      for (int64_t i : a->ints) t.v.push_back(static_cast<double>(i));
    } else {
      error(ErrorCode::Unsupported, "a Constant needs a value, value_float(s) or value_int(s) attribute");
    }
    set(0, make_const(std::move(t)));
  }

  void shape_op() {
    const Shape& s = in(0).shape;
    const auto r = static_cast<int64_t>(s.size());
    int64_t start = attr_i("start", 0), end = attr_i("end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = std::clamp<int64_t>(start, 0, r);
    end = std::clamp<int64_t>(end, start, r);
    Tensor t{Kind::Int, {end - start}, {}};
    for (int64_t i = start; i < end; ++i) t.v.push_back(static_cast<double>(s[static_cast<size_t>(i)]));
    set(0, make_const(std::move(t)));
  }

  void constant_of_shape() {
    const std::vector<int64_t> dims = ints_in(0, "shape");
    Tensor fill{Kind::Float, {}, {0.0}};
    if (const Attr* a = attr("value"); a && a->t) fill = *a->t;
    if (fill.v.size() != 1) error(ErrorCode::ParseError, "value must hold one element");
    Tensor t = checked_tensor(fill.kind, dims);
    std::fill(t.v.begin(), t.v.end(), fill.v[0]);
    set(0, make_const(std::move(t)));
  }

  void range() {
    const double start = const_in(0, "start").v.at(0), limit = const_in(1, "limit").v.at(0),
                 delta = const_in(2, "delta").v.at(0);
    if (delta == 0) error(ErrorCode::InvalidArgument, "delta is 0");
    const double count = std::max(0.0, std::ceil((limit - start) / delta));
    if (count > static_cast<double>(kMaxFoldElements)) {
      error(ErrorCode::OutOfRange, "Range of " + std::to_string(count) + " values is past the limit");
    }
    Tensor t = checked_tensor(in(0).kind, {static_cast<int64_t>(count)});
    for (size_t i = 0; i < t.v.size(); ++i) t.v[i] = round_to(t.kind, start + static_cast<double>(i) * delta);
    set(0, make_const(std::move(t)));
  }

  void cast() {
    const int to = static_cast<int>(attr_i("to", kFloat));
    if (!supported_type(to)) error(ErrorCode::Unsupported, "Cast to " + data_type_name(to) + " is not supported");
    const Kind kind = kind_of(to);
    Val v = in(0);
    if (v.is_const()) {
      for (double& x : v.c.v) x = round_to(kind, x);
      v.c.kind = kind;
      v.kind = kind;
      return set(0, v);
    }
    // Runtime values are f32: to float is exact, int/bool to int keeps the values, to bool is
    // x != 0. Float to int would need rounding toward zero, which rungs has no op for.
    if (kind == Kind::Int && v.kind == Kind::Float) {
      error(ErrorCode::Unsupported, "Cast of a float computed at run time to " + data_type_name(to) +
                                        " is not supported (rungs computes in f32 and has no truncation op)");
    }
    if (kind == Kind::Bool && v.kind != Kind::Bool) {
      v = make_rt(graph_->logical_not(graph_->logical_not(mat(v))), Kind::Bool, v.origin);
    }
    v.kind = kind;
    set(0, v);
  }

  // A runtime or weight value reshaped, keeping its origin (an input reshaped is still that input).
  Val reshape_val(const Val& x, const Shape& s) {
    if (shape_numel(s) != shape_numel(x.shape)) {
      error(ErrorCode::ShapeMismatch, "cannot reshape " + shape_to_string(x.shape) + " to " + shape_to_string(s));
    }
    if (x.is_const()) {
      Val v = x;
      v.c.shape = s;
      v.shape = s;
      return v;
    }
    if (s == x.shape) return x;
    if (x.where == Val::Where::Runtime && !x.unreshaped.second.empty() && x.unreshaped.second == s) {
      Val v = make_rt(x.unreshaped.first, x.kind, x.origin);  // a reshape back: the value itself
      v.lo = x.lo;
      return v;
    }
    const Value from = mat(x);
    Val v = make_rt(graph_->reshape(from, s), x.kind, x.origin);
    v.lo = x.lo;
    if (x.where == Val::Where::Runtime) v.unreshaped = {from, x.shape};
    return v;
  }

  void reshape_op() {
    const Val& x = in(0);
    const std::vector<int64_t> want = ints_in(1, "shape");
    const bool allowzero = attr_i("allowzero", 0) != 0;
    Shape s;
    int infer = -1;
    int64_t known = 1;
    for (size_t i = 0; i < want.size(); ++i) {
      int64_t d = want[i];
      if (d == 0 && !allowzero) {
        if (i >= x.shape.size()) error(ErrorCode::ShapeMismatch, "shape " + ints_text(want) + " copies dim " + std::to_string(i) + " of " + shape_to_string(x.shape));
        d = x.shape[i];
      }
      if (d == -1) {
        if (infer >= 0) error(ErrorCode::ShapeMismatch, "shape " + ints_text(want) + " has two -1");
        infer = static_cast<int>(i);
        s.push_back(1);
        continue;
      }
      if (d < 0) error(ErrorCode::ShapeMismatch, "shape " + ints_text(want) + " has a negative dim");
      // A product past int64 (found by fuzz_onnx): no real tensor has that many values.
      if (d > 0 && known > std::numeric_limits<int64_t>::max() / d) {
        error(ErrorCode::ShapeMismatch, "cannot reshape " + shape_to_string(x.shape) + " to " + ints_text(want));
      }
      known *= d;
      s.push_back(d);
    }
    const int64_t total = shape_numel(x.shape);
    if (infer >= 0) {
      if (known == 0 || total % known != 0) {
        error(ErrorCode::ShapeMismatch, "cannot reshape " + shape_to_string(x.shape) + " to " + ints_text(want));
      }
      s[static_cast<size_t>(infer)] = total / known;
    }
    set(0, reshape_val(x, s));
  }

  void reshape_like(const std::string& op) {
    const Val& x = in(0);
    Shape s = x.shape;
    if (op == "Flatten") {  // axis in [-r, r]
      int64_t ax = attr_i("axis", 1);
      if (ax < 0) ax += static_cast<int64_t>(s.size());
      const int axis = norm_axis(ax, s.size() + 1);
      int64_t a = 1, b = 1;
      for (size_t i = 0; i < s.size(); ++i) (static_cast<int>(i) < axis ? a : b) *= s[i];
      return set(0, reshape_val(x, {a, b}));
    }
    std::vector<int64_t> axes;
    bool given = false;
    if (g_.opset >= 13) {
      if (has_input(1)) axes = ints_in(1, "axes"), given = true;
    } else if (auto a = attr_ints("axes")) {
      axes = *a;
      given = true;
    }
    if (op == "Unsqueeze") {
      const size_t r = s.size() + axes.size();
      std::vector<bool> at(r, false);
      for (int64_t a : axes) at[static_cast<size_t>(norm_axis(a, r))] = true;
      Shape out;
      size_t k = 0;
      for (size_t i = 0; i < r; ++i) out.push_back(at[i] ? 1 : s.at(k++));
      return set(0, reshape_val(x, out));
    }
    std::vector<bool> drop(s.size(), false);
    if (!given) {
      for (size_t i = 0; i < s.size(); ++i) drop[i] = s[i] == 1;
    } else {
      for (int64_t a : axes) {
        const int ax = norm_axis(a, s.size());
        if (s[static_cast<size_t>(ax)] != 1) {
          error(ErrorCode::ShapeMismatch, "cannot squeeze axis " + std::to_string(a) + " of " + shape_to_string(s));
        }
        drop[static_cast<size_t>(ax)] = true;
      }
    }
    Shape out;
    for (size_t i = 0; i < s.size(); ++i)
      if (!drop[i]) out.push_back(s[i]);
    set(0, reshape_val(x, out));
  }

  void transpose() {
    const Val& x = in(0);
    std::vector<int64_t> perm;
    if (auto p = attr_ints("perm")) perm = *p;
    else
      for (size_t i = x.shape.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
    if (perm.size() != x.shape.size()) error(ErrorCode::ShapeMismatch, "perm " + ints_text(perm) + " does not fit " + shape_to_string(x.shape));
    std::vector<int> p;
    for (int64_t a : perm) p.push_back(norm_axis(a, x.shape.size()));
    if (x.is_const()) {
      Shape s;
      for (int a : p) s.push_back(x.shape[static_cast<size_t>(a)]);
      Tensor t = checked_tensor(x.kind, s);
      const size_t r = s.size();
      std::vector<int64_t> in_stride(r, 1);
      for (size_t i = r; i-- > 1;) in_stride[i - 1] = in_stride[i] * x.shape[i];
      std::vector<int64_t> pos(r, 0);
      for (size_t k = 0; k < t.v.size(); ++k) {
        int64_t src = 0;
        for (size_t d = 0; d < r; ++d) src += pos[d] * in_stride[static_cast<size_t>(p[d])];
        t.v[k] = x.c.v[static_cast<size_t>(src)];
        for (size_t d = r; d-- > 0;) {
          if (++pos[d] < s[d]) break;
          pos[d] = 0;
        }
      }
      return set(0, make_const(std::move(t)));
    }
    set(0, make_rt(graph_->transpose(mat(x), p), x.kind));
  }

  // Concatenates constants along `axis`.
  Tensor concat_tensors(const std::vector<const Tensor*>& ts, int axis) {
    Shape s = ts[0]->shape;
    // Scalars have no axis to join along (found by fuzz_onnx: s[0] of an empty shape).
    if (s.empty()) error(ErrorCode::ShapeMismatch, "cannot concatenate scalars (rank 0)");
    const auto a = static_cast<size_t>(axis);
    s[a] = 0;
    for (const Tensor* t : ts) {
      if (t->shape.size() != s.size()) error(ErrorCode::ShapeMismatch, "inputs of different ranks");
      for (size_t i = 0; i < s.size(); ++i)
        if (i != a && t->shape[i] != ts[0]->shape[i]) error(ErrorCode::ShapeMismatch, "shapes " + shape_to_string(ts[0]->shape) + " and " + shape_to_string(t->shape) + " differ off the axis");
      s[a] += t->shape[a];
    }
    Tensor out = checked_tensor(ts[0]->kind, s);
    int64_t outer = 1;
    for (size_t i = 0; i < a; ++i) outer *= s[i];
    size_t k = 0;
    for (int64_t o = 0; o < outer; ++o) {
      for (const Tensor* t : ts) {
        const auto chunk = static_cast<size_t>(shape_numel(t->shape) / std::max<int64_t>(outer, 1));
        for (size_t j = 0; j < chunk; ++j) out.v[k++] = t->v[static_cast<size_t>(o) * chunk + j];
      }
    }
    return out;
  }

  void concat() {
    const size_t n = node_->inputs.size();
    if (n == 0) error(ErrorCode::ParseError, "needs at least one input");
    const int axis = norm_axis(attr_i("axis", 0), in(0).shape.size());
    if (all_const()) {
      std::vector<const Tensor*> ts;
      for (size_t i = 0; i < n; ++i) ts.push_back(&in(i).c);
      Tensor t = concat_tensors(ts, axis);
      for (size_t i = 0; i < n; ++i)
        if (in(i).kind == Kind::Float) t.kind = Kind::Float;
      return set(0, make_const(std::move(t)));
    }
    std::vector<Value> xs;
    Kind kind = Kind::Bool;
    for (size_t i = 0; i < n; ++i) {
      if (shape_numel(in(i).shape) == 0) continue;  // exporters concatenate empty tensors
      xs.push_back(mat(in(i)));
      if (in(i).kind == Kind::Float || kind == Kind::Float) kind = Kind::Float;
      else kind = Kind::Int;
    }
    set(0, make_rt(xs.size() == 1 ? xs[0] : graph_->concat(xs, axis), kind));
  }

  // x[start:start+len] along axis for a runtime or weight value.
  Value slice_rt(Value x, int axis, int64_t start, int64_t len) {
    const Shape s = graph_->shape(x);
    if (start == 0 && len == s[static_cast<size_t>(axis)]) return x;
    return graph_->slice(x, axis, start, len);
  }

  // x[..., ids, ...] along `axis` for ids in [0, dim) computed at run time (or constant): rows of
  // a [dim, rest] table (an embedding lookup when x is a weight), another axis moved to the front
  // first and back after. The result has shape xs[:axis] + ids_shape + xs[axis+1:].
  Value take(Value x, const Shape& xs, int axis, Value ids, const Shape& ids_shape) {
    const size_t r = xs.size();
    const auto a = static_cast<size_t>(axis);
    const int64_t dim = xs[a];
    Shape moved{dim};
    if (axis != 0) {
      std::vector<int> perm{axis};
      for (size_t i = 0; i < r; ++i)
        if (i != a) perm.push_back(static_cast<int>(i));
      x = graph_->transpose(x, perm);
    }
    for (size_t i = 0; i < r; ++i)
      if (i != a) moved.push_back(xs[i]);
    const int64_t rest = dim == 0 ? 0 : shape_numel(xs) / dim;
    if (r != 2) x = graph_->reshape(x, {dim, rest});
    Value y = graph_->gather(x, ids);
    Shape ys(ids_shape);
    ys.insert(ys.end(), moved.begin() + 1, moved.end());
    y = graph_->reshape(y, ys);
    if (axis != 0) {  // put the ids' dims at `axis`
      const int q = static_cast<int>(ids_shape.size());
      std::vector<int> back;
      for (int i = 0; i < axis; ++i) back.push_back(q + i);
      for (int i = 0; i < q; ++i) back.push_back(i);
      for (int i = axis; i < static_cast<int>(r) - 1; ++i) back.push_back(q + i);
      y = graph_->transpose(y, back);
    }
    return y;
  }

  void gather() {
    const Val& data = in(0);
    const Val& idx = in(1);
    const int axis = norm_axis(attr_i("axis", 0), data.shape.size());
    const auto a = static_cast<size_t>(axis);
    const int64_t dim = data.shape.at(a);
    Shape out_shape(data.shape.begin(), data.shape.begin() + axis);
    out_shape.insert(out_shape.end(), idx.shape.begin(), idx.shape.end());
    out_shape.insert(out_shape.end(), data.shape.begin() + axis + 1, data.shape.end());
    if (idx.is_const()) {
      std::vector<int64_t> ids;
      for (double d : idx.c.v) {
        auto i = static_cast<int64_t>(d);
        if (i < 0) i += dim;
        if (i < 0 || i >= dim) error(ErrorCode::OutOfRange, "index " + std::to_string(static_cast<int64_t>(d)) + " is outside [" + std::to_string(-dim) + ", " + std::to_string(dim) + ")");
        ids.push_back(i);
      }
      if (data.is_const()) {
        Tensor t = checked_tensor(data.kind, out_shape);
        int64_t outer = 1, inner = 1;
        for (size_t i = 0; i < a; ++i) outer *= data.shape[i];
        for (size_t i = a + 1; i < data.shape.size(); ++i) inner *= data.shape[i];
        size_t k = 0;
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t id : ids)
            for (int64_t j = 0; j < inner; ++j) t.v[k++] = data.c.v[static_cast<size_t>((o * dim + id) * inner + j)];
        return set(0, make_const(std::move(t)));
      }
      // Rows of a weight table at constant ids (position embeddings). Consecutive ids from 0 (the
      // usual Range(0, seq) or a sliced position-id buffer) are a prefix slice of the table, which
      // active extent can shorten (docs/active-extent.md); other ids an embedding lookup.
      if (data.where == Val::Where::Weight && axis == 0 && data.shape.size() == 2 && ids.size() > 1) {
        bool prefix = true;
        for (size_t i = 0; prefix && i < ids.size(); ++i) prefix = ids[i] == static_cast<int64_t>(i);
        if (prefix) {
          const auto n = static_cast<int64_t>(ids.size());
          return set(0, reshape_val(make_rt(graph_->slice(mat(data), 0, 0, n), data.kind), out_shape));
        }
        Tensor ti{Kind::Int, idx.shape, std::vector<double>(ids.begin(), ids.end())};
        Value y = graph_->gather(mat(data), mat(make_const(ti)));
        return set(0, make_rt(y, data.kind));
      }
      // Constant positions of a runtime value (first-token selection): slices.
      const Value x = mat(data);
      std::vector<Value> parts;
      for (size_t i = 0; i < ids.size();) {
        size_t j = i + 1;
        while (j < ids.size() && ids[j] == ids[j - 1] + 1) ++j;  // runs of consecutive ids: one slice
        parts.push_back(slice_rt(x, axis, ids[i], static_cast<int64_t>(j - i)));
        i = j;
      }
      Value y = parts.size() == 1 ? parts[0] : graph_->concat(parts, axis);
      Val picked = make_rt(y, data.kind, data.origin);  // some of an input's values are still that input
      picked.lo = data.lo;
      return set(0, reshape_val(picked, out_shape));
    }
    // Runtime ids: rows of the table; a negative id counts from the end, as ONNX says.
    if (idx.kind == Kind::Float) error(ErrorCode::Unsupported, "Gather indices must be integers");
    Value ids = mat(idx);
    const Value zero = graph_->constant({0.f}, {});
    ids = graph_->where(graph_->less(ids, zero), graph_->add(ids, graph_->constant({static_cast<float>(dim)}, {})), ids);
    Value y = take(mat(data), data.shape, axis, ids, idx.shape);
    if (idx.origin >= 0 && roles_) {
      auto& r = (*roles_)[static_cast<size_t>(idx.origin)];
      r.role = InputRole::Ids;
      r.vocab = r.vocab ? std::min<uint64_t>(r.vocab, static_cast<uint64_t>(dim)) : static_cast<uint64_t>(dim);
    }
    set(0, reshape_val(make_rt(y, data.kind), out_shape));
  }

  void slice() {
    const Val& x = in(0);
    std::vector<int64_t> starts, ends, axes, steps;
    if (g_.opset < 10) {
      starts = attr_ints("starts").value_or(std::vector<int64_t>{});
      ends = attr_ints("ends").value_or(std::vector<int64_t>{});
      axes = attr_ints("axes").value_or(std::vector<int64_t>{});
    } else {
      starts = ints_in(1, "starts");
      ends = ints_in(2, "ends");
      if (has_input(3)) axes = ints_in(3, "axes");
      if (has_input(4)) steps = ints_in(4, "steps");
    }
    if (axes.empty())
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
      error(ErrorCode::ParseError, "starts, ends, axes and steps differ in length");
    }
    // Per axis: start, step, count (numpy semantics, clamped).
    const size_t r = x.shape.size();
    std::vector<int64_t> st(r, 0), sp(r, 1), cnt(x.shape);
    for (size_t i = 0; i < starts.size(); ++i) {
      const auto a = static_cast<size_t>(norm_axis(axes[i], r));
      const int64_t d = x.shape[a], step = steps[i];
      if (step == 0) error(ErrorCode::InvalidArgument, "step 0");
      int64_t s = starts[i], e = ends[i];
      if (s < 0) s += d;
      if (e < 0) e += d;
      if (step > 0) {
        s = std::clamp<int64_t>(s, 0, d);
        e = std::clamp<int64_t>(e, 0, d);
        cnt[a] = e > s ? (e - s + step - 1) / step : 0;
      } else {
        s = std::clamp<int64_t>(s, -1, d - 1);
        e = std::clamp<int64_t>(e, -1, d - 1);
        cnt[a] = s > e ? (s - e - step - 1) / (-step) : 0;
      }
      st[a] = s;
      sp[a] = step;
    }
    if (x.is_const()) {
      Tensor t = checked_tensor(x.kind, cnt);
      std::vector<int64_t> stride(r, 1);
      for (size_t i = r; i-- > 1;) stride[i - 1] = stride[i] * x.shape[i];
      std::vector<int64_t> pos(r, 0);
      for (size_t k = 0; k < t.v.size(); ++k) {
        int64_t src = 0;
        for (size_t d = 0; d < r; ++d) src += (st[d] + pos[d] * sp[d]) * stride[d];
        t.v[k] = x.c.v[static_cast<size_t>(src)];
        for (size_t d = r; d-- > 0;) {
          if (++pos[d] < cnt[d]) break;
          pos[d] = 0;
        }
      }
      return set(0, make_const(std::move(t)));
    }
    Value y = mat(x);
    for (size_t a = 0; a < r; ++a) {
      if (cnt[a] == x.shape[a] && sp[a] == 1) continue;
      if (cnt[a] == 0) error(ErrorCode::Unsupported, "Slice to an empty tensor of a value computed at run time is not supported");
      if (sp[a] == 1) {
        y = graph_->slice(y, static_cast<int>(a), st[a], cnt[a]);
        continue;
      }
      std::vector<float> ids;  // another step: the rows it picks, gathered
      for (int64_t k = 0; k < cnt[a]; ++k) ids.push_back(static_cast<float>(st[a] + k * sp[a]));
      y = take(y, graph_->shape(y), static_cast<int>(a), graph_->constant(std::move(ids), {cnt[a]}), {cnt[a]});
    }
    set(0, make_rt(y, x.kind, x.origin));
  }

  void split() {
    const Val& x = in(0);
    const int axis = norm_axis(attr_i("axis", 0), x.shape.size());
    const int64_t d = x.shape[static_cast<size_t>(axis)];
    std::vector<int64_t> sizes;
    if (g_.opset >= 13 && has_input(1)) sizes = ints_in(1, "split");
    else if (auto s = attr_ints("split")) sizes = *s;
    const size_t n = node_->outputs.size();
    if (sizes.empty()) {
      if (n == 0 || d % static_cast<int64_t>(n) != 0) error(ErrorCode::ShapeMismatch, "cannot split " + std::to_string(d) + " into " + std::to_string(n) + " equal parts");
      sizes.assign(n, d / static_cast<int64_t>(n));
    }
    if (sizes.size() != n || std::accumulate(sizes.begin(), sizes.end(), int64_t{0}) != d) {
      error(ErrorCode::ShapeMismatch, "split " + ints_text(sizes) + " does not cover dim " + std::to_string(d) + " in " + std::to_string(n) + " outputs");
    }
    int64_t start = 0;
    for (size_t i = 0; i < n; ++i) {
      if (x.is_const()) {
        // Reuse slice's constant path through a temporary node description.
        Tensor t = x.c;
        Shape s = x.shape;
        s[static_cast<size_t>(axis)] = sizes[i];
        Tensor out = checked_tensor(x.kind, s);
        int64_t outer = 1, inner = 1;
        for (size_t k = 0; k < static_cast<size_t>(axis); ++k) outer *= x.shape[k];
        for (size_t k = static_cast<size_t>(axis) + 1; k < x.shape.size(); ++k) inner *= x.shape[k];
        size_t w = 0;
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t j = 0; j < sizes[i] * inner; ++j) out.v[w++] = t.v[static_cast<size_t>((o * d + start) * inner + j)];
        set(i, make_const(std::move(out)));
      } else {
        set(i, make_rt(slice_rt(mat(x), axis, start, sizes[i]), x.kind));
      }
      start += sizes[i];
    }
  }

  void expand() {
    const Val& x = in(0);
    const std::vector<int64_t> want = ints_in(1, "shape");
    const Shape s = broadcast_shape(x.shape, want);
    if (x.is_const()) {
      const Tensor zeros = checked_tensor(x.kind, s);
      return set(0, make_const(fold_binary(x.c, zeros, x.kind, [](double a, double) { return a; })));
    }
    if (s == x.shape) return set(0, x);
    std::vector<float> zeros(static_cast<size_t>(shape_numel(s)), 0.f);
    set(0, make_rt(graph_->add(mat(x), graph_->constant(std::move(zeros), s)), x.kind));
  }

  // ---------------------------------------------------------------- linear algebra and norms
  void matmul() {
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

  void gemm() {
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

  void softmax() {
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

  void reduce(const std::string& op) {
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
  Tensor fold_reduce(const std::string& op, const Tensor& x, const std::vector<int>& ax, bool keep) {
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

  // ---------------------------------------------------------------- indexed gather and scatter
  // NonZero of a constant: the [rank, count] positions of its non-zero elements, in order.
  void non_zero() {
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
  std::vector<int64_t> nd_rows(const Tensor& indices, const Shape& data, int64_t* k_out) {
    if (indices.shape.empty()) error(ErrorCode::ShapeMismatch, "indices must have rank >= 1");
    const int64_t k = indices.shape.back();
    if (k < 1 || k > static_cast<int64_t>(data.size())) {
      error(ErrorCode::ShapeMismatch, "indices of depth " + std::to_string(k) + " for data " + shape_to_string(data));
    }
    std::vector<int64_t> rows;
    for (size_t q = 0; q < indices.v.size(); q += static_cast<size_t>(k)) {
      int64_t row = 0;
      for (int64_t d = 0; d < k; ++d) {
        auto i = static_cast<int64_t>(indices.v[q + static_cast<size_t>(d)]);
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
  Value pick_rows(Value table, int64_t n, const std::vector<int64_t>& ids) {
    bool same = static_cast<int64_t>(ids.size()) == n;
    for (size_t i = 0; same && i < ids.size(); ++i) same = ids[i] == static_cast<int64_t>(i);
    if (same) return table;
    std::vector<float> f(ids.begin(), ids.end());
    return graph_->gather(table, graph_->constant(std::move(f), {static_cast<int64_t>(ids.size())}));
  }

  // GatherND (batch_dims 0) at constant indices: rows of the data with its first k dims flattened.
  void gather_nd() {
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
  void scatter_nd() {
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

  // ---------------------------------------------------------------- TensorFlow ops (kTfDomain)
  // BatchMatMul with adj_x / adj_y: the last two dims transposed first.
  void batch_matmul() {
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

  void layer_norm() {
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
};

// The symbols of the graph's inputs, in order of first appearance.
std::vector<std::string> symbols_of(const OnnxGraph& g, const std::string& source) {
  std::vector<std::string> out;
  for (const Port& p : g.inputs) {
    for (size_t i = 0; i < p.dims.size(); ++i) {
      const Dim& d = p.dims[i];
      if (d.value >= 0) continue;
      if (d.symbol.empty()) {
        fail(ErrorCode::Unsupported, source + ": input '" + p.name + "' axis " + std::to_string(i) +
                                         " has neither a size nor a name; name it (a dynamic axis) when "
                                         "exporting, e.g. dynamic_axes={'" + p.name + "': {" + std::to_string(i) +
                                         ": 'seq'}}");
      }
      if (std::find(out.begin(), out.end(), d.symbol) == out.end()) out.push_back(d.symbol);
    }
  }
  return out;
}

}  // namespace

HirModule build_module(const OnnxGraph& g, const std::string& where, const std::map<std::string, int64_t>& symbols,
                       std::vector<model::Frontend::Role>* roles) {
  Builder b(g, where, symbols, roles);
  return b.build();
}

std::vector<ModelInput> GraphFrontend::inputs(int64_t extent) const {
  std::vector<ModelInput> out;
  for (const Port& p : g.inputs) {
    Shape s;
    for (const Dim& d : p.dims) s.push_back(d.value >= 0 ? d.value : d.symbol == bucket_ ? extent
                                                                                         : fixed.at(d.symbol));
    out.push_back({p.name, s, element_type(p.elem_type)});
  }
  return out;
}

std::vector<std::string> GraphFrontend::output_names() const {
  std::vector<std::string> out;
  for (const Port& p : g.outputs) out.push_back(p.name);
  return out;
}

std::vector<ElementType> GraphFrontend::output_types() const {
  std::vector<ElementType> out;
  for (const Port& p : g.outputs) out.push_back(element_type(p.elem_type));
  return out;
}

const OnnxGraph& GraphFrontend::graph_at(int64_t, OnnxGraph&) const { return g; }

model::LoadedFrontend loaded(std::shared_ptr<GraphFrontend> f) {
  model::LoadedFrontend out;
  out.weights = std::move(f->g.weight_values);
  out.stored = f->g.stored;
  f->g.weight_values.clear();
  out.frontend = std::move(f);
  return out;
}

HirModule GraphFrontend::build_roles(int64_t extent, std::vector<Role>* r) const {
  std::map<std::string, int64_t> symbols = fixed;
  if (!bucket_.empty()) symbols[bucket_] = extent;
  const std::string where = bucket_.empty() ? source : source + " (at " + bucket_ + "=" + std::to_string(extent) + ")";
  OnnxGraph scratch;
  return build_module(graph_at(extent, scratch), where, symbols, r);
}

namespace {

class OnnxFrontend final : public GraphFrontend {
 public:
  std::string_view format() const override { return "onnx"; }
  std::string param_origin(const std::string& param) const override { return "initializer '" + param + "'"; }
};

}  // namespace

}  // namespace rungs::onnx_import

namespace rungs::model {

LoadedFrontend load_onnx(std::span<const uint8_t> bytes, const LoadOptions& options, const std::string& source,
                         const std::string& base_dir) {
  using namespace onnx_import;
  auto f = std::make_shared<OnnxFrontend>();
  f->g = read_graph(bytes, options, source, base_dir);
  f->source = source;
  f->name_ = std::filesystem::path(source).stem().string();
  f->description_ = f->g.doc.empty() ? "ONNX model" + (f->g.producer.empty() ? std::string() : " from " + f->g.producer) +
                                           ", opset " + std::to_string(f->g.opset)
                                     : f->g.doc;
  // Symbols: `fix` first, batch-like ones default to 1, the bucket dim is what is left.
  const std::vector<std::string> symbols = symbols_of(f->g, source);
  const std::string listed = symbols.empty() ? "none" : join(symbols);
  for (const auto& [sym, value] : options.fix) {
    if (std::find(symbols.begin(), symbols.end(), sym) == symbols.end()) {
      fail(ErrorCode::InvalidArgument, source + ": fix: '" + sym + "' is not a symbolic dim of the model's inputs (they are: " + listed + ")");
    }
    if (value < 1 || value > kMaxDim) {
      fail(ErrorCode::InvalidArgument, source + ": fix: " + sym + "=" + std::to_string(value) + " is outside [1, " + std::to_string(kMaxDim) + "]");
    }
    f->fixed[sym] = value;
  }
  if (!options.bucket_dim.empty()) {
    if (std::find(symbols.begin(), symbols.end(), options.bucket_dim) == symbols.end()) {
      fail(ErrorCode::InvalidArgument, source + ": bucket_dim: '" + options.bucket_dim + "' is not a symbolic dim of the model's inputs (they are: " + listed + ")");
    }
    if (f->fixed.count(options.bucket_dim)) {
      fail(ErrorCode::InvalidArgument, source + ": '" + options.bucket_dim + "' is both the bucket dim and fixed");
    }
    f->bucket_ = options.bucket_dim;
  }
  std::vector<std::string> left;
  for (const std::string& s : symbols) {
    if (f->fixed.count(s) || s == f->bucket_) continue;
    if (batch_like(s) && (symbols.size() > 1 || !f->bucket_.empty())) {
      f->fixed[s] = 1;
      continue;
    }
    left.push_back(s);
  }
  if (f->bucket_.empty()) {
    if (left.size() > 1) {
      fail(ErrorCode::InvalidArgument, source + ": the bucket dim is ambiguous: the symbolic dims " + join(left) +
                                           " are left; choose one with --bucket-dim NAME (LoadOptions::bucket_dim) "
                                           "and fix the others with --fix NAME=VALUE (LoadOptions::fix)");
    }
    if (left.size() == 1) f->bucket_ = left[0];
  } else if (!left.empty()) {
    fail(ErrorCode::InvalidArgument, source + ": the symbolic dims " + join(left) + " are neither the bucket dim '" +
                                         f->bucket_ + "' nor fixed; fix them with --fix NAME=VALUE (LoadOptions::fix)");
  }
  // Roles: what the inputs feed (found by one build), masks by name.
  f->roles.assign(f->g.inputs.size(), {});
  f->build_roles(2, &f->roles);
  for (size_t i = 0; i < f->g.inputs.size(); ++i) {
    std::string n;
    for (char c : f->g.inputs[i].name) n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (f->roles[i].role == InputRole::Values && n.find("mask") != std::string::npos) f->roles[i].role = InputRole::Mask;
  }
  return loaded(std::move(f));
}

}  // namespace rungs::model
