// SPDX-License-Identifier: Apache-2.0
// core/ir/graph.cpp: the Graph builder. Every method validates first and only then appends, so a
// throwing call leaves the graph unchanged.
#include "rungs/graph.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/check.hpp"
#include "core/ir/graph_impl.hpp"

namespace rungs {

using ir::GraphImpl;
using ir::Node;
using ir::Op;

std::string to_string(Device device) { return device == Device::Cpu ? "cpu" : "reference"; }

std::string to_string(Activation act) {
  switch (act) {
    case Activation::None: return "none";
    case Activation::Relu: return "relu";
    case Activation::Gelu: return "gelu";
    case Activation::GeluTanh: return "gelu_tanh";
    case Activation::Silu: return "silu";
    case Activation::Tanh: return "tanh";
    case Activation::Sigmoid: return "sigmoid";
  }
  return "?";
}

std::string shape_to_string(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

namespace {

constexpr int64_t kMaxElements = int64_t{1} << 40;  // refuse absurd tensors before any overflow

void check_shape(const Shape& shape, const std::string& what) {
  if (shape.size() > static_cast<size_t>(ir::kMaxRank))
    fail(ErrorCode::Unsupported, what + ": rank " + std::to_string(shape.size()) + " " +
                                     shape_to_string(shape) + " exceeds the maximum rank " +
                                     std::to_string(ir::kMaxRank));
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 1)
      fail(ErrorCode::InvalidArgument,
           what + ": shape " + shape_to_string(shape) + " has a dimension < 1; every dimension must be >= 1");
    if (n > kMaxElements / d)
      fail(ErrorCode::OutOfRange, what + ": shape " + shape_to_string(shape) + " has more than 2^40 elements");
    n *= d;
  }
}

int normalize_axis(int axis, size_t rank, const std::string& op, const Shape& shape) {
  int r = static_cast<int>(rank);
  int a = axis < 0 ? axis + r : axis;
  if (a < 0 || a >= r)
    fail(ErrorCode::InvalidArgument, op + ": axis " + std::to_string(axis) + " is out of range for shape " +
                                         shape_to_string(shape) + " (rank " + std::to_string(r) + ")");
  return a;
}

}  // namespace

Graph::Graph() : impl_(std::make_unique<GraphImpl>()) {}
Graph::~Graph() = default;
Graph::Graph(const Graph& other) : impl_(std::make_unique<GraphImpl>(*other.impl_)) {}
Graph& Graph::operator=(const Graph& other) {
  if (this != &other) impl_ = std::make_unique<GraphImpl>(*other.impl_);
  return *this;
}
Graph::Graph(Graph&& other) noexcept : impl_(std::move(other.impl_)) {
  other.impl_ = std::make_unique<GraphImpl>();
}
Graph& Graph::operator=(Graph&& other) noexcept {
  std::swap(impl_, other.impl_);
  return *this;
}

namespace {

const Node& node_of(const GraphImpl& g, Value v, const char* op) {
  if (v.id >= g.nodes.size())
    fail(ErrorCode::InvalidArgument, std::string(op) + ": value %" + std::to_string(v.id) +
                                         " does not belong to this graph (it has " +
                                         std::to_string(g.nodes.size()) + " nodes)");
  return g.nodes[v.id];
}

void check_leaf_name(const GraphImpl& g, const std::string& name, const char* op) {
  if (name.empty()) fail(ErrorCode::InvalidArgument, std::string(op) + ": the name must not be empty");
  for (const Node& n : g.nodes)
    if ((n.op == Op::Input || n.op == Op::Param) && n.name == name)
      fail(ErrorCode::InvalidArgument, std::string(op) + ": the name '" + name + "' is already used by " +
                                           (n.op == Op::Input ? "an input" : "a param") +
                                           "; inputs and params need distinct names");
}

Value push(GraphImpl& g, Node n) { return Value{g.add(std::move(n))}; }

Value unary(GraphImpl& g, Op op, Value x) {
  const Node& xn = node_of(g, x, ir::op_name(op).data());
  Node n;
  n.op = op;
  n.in = {x.id};
  n.shape = xn.shape;
  return push(g, std::move(n));
}

Value binary(GraphImpl& g, Op op, Value a, Value b) {
  std::string name(ir::op_name(op));
  const Shape& sa = node_of(g, a, name.c_str()).shape;
  const Shape& sb = node_of(g, b, name.c_str()).shape;
  auto out = ir::broadcast_shapes(sa, sb);
  if (!out)
    fail(ErrorCode::ShapeMismatch, name + ": shapes " + shape_to_string(sa) + " and " + shape_to_string(sb) +
                                       " do not broadcast (each dimension must match or be 1, aligned from the right)");
  check_shape(*out, name);
  Node n;
  n.op = op;
  n.in = {a.id, b.id};
  n.shape = *out;
  return push(g, std::move(n));
}

Value reduce(GraphImpl& g, Op op, Value x, std::vector<int> axes, bool keep_dims) {
  std::string name(ir::op_name(op));
  const Shape& s = node_of(g, x, name.c_str()).shape;
  if (axes.empty()) fail(ErrorCode::InvalidArgument, name + ": axes must not be empty (shape " + shape_to_string(s) + ")");
  std::vector<int64_t> norm;
  for (int a : axes) norm.push_back(normalize_axis(a, s.size(), name, s));
  std::sort(norm.begin(), norm.end());
  if (std::adjacent_find(norm.begin(), norm.end()) != norm.end())
    fail(ErrorCode::InvalidArgument, name + ": an axis is listed twice (shape " + shape_to_string(s) + ")");
  Shape out;
  for (size_t i = 0; i < s.size(); ++i) {
    bool reduced = std::binary_search(norm.begin(), norm.end(), static_cast<int64_t>(i));
    if (!reduced)
      out.push_back(s[i]);
    else if (keep_dims)
      out.push_back(1);
  }
  Node n;
  n.op = op;
  n.in = {x.id};
  n.shape = out;
  n.ints = norm;
  n.keep_dims = keep_dims;
  return push(g, std::move(n));
}

}  // namespace

Value Graph::input(std::string name, Shape shape) {
  check_leaf_name(*impl_, name, "input");
  check_shape(shape, "input '" + name + "'");
  Node n;
  n.op = Op::Input;
  n.name = std::move(name);
  n.shape = std::move(shape);
  return push(*impl_, std::move(n));
}

Value Graph::param(std::string name, Shape shape) {
  check_leaf_name(*impl_, name, "param");
  check_shape(shape, "param '" + name + "'");
  Node n;
  n.op = Op::Param;
  n.name = std::move(name);
  n.shape = std::move(shape);
  return push(*impl_, std::move(n));
}

Value Graph::constant(std::vector<float> data, Shape shape) {
  check_shape(shape, "constant");
  if (static_cast<int64_t>(data.size()) != shape_numel(shape))
    fail(ErrorCode::ShapeMismatch, "constant: " + std::to_string(data.size()) + " values given for shape " +
                                       shape_to_string(shape) + ", which needs " +
                                       std::to_string(shape_numel(shape)));
  Node n;
  n.op = Op::Constant;
  n.shape = std::move(shape);
  n.data = std::make_shared<const std::vector<float>>(std::move(data));
  return push(*impl_, std::move(n));
}

Value Graph::matmul(Value a, Value b) {
  const Shape& sa = node_of(*impl_, a, "matmul").shape;
  const Shape& sb = node_of(*impl_, b, "matmul").shape;
  if (sa.size() < 2 || sb.size() < 2)
    fail(ErrorCode::ShapeMismatch, "matmul: both operands need rank >= 2, got a " + shape_to_string(sa) + " and b " +
                                       shape_to_string(sb) + " (reshape a vector to [1, K] or [K, 1])");
  int64_t k1 = sa[sa.size() - 1], k2 = sb[sb.size() - 2];
  if (k1 != k2)
    fail(ErrorCode::ShapeMismatch, "matmul: inner dimensions differ: a " + shape_to_string(sa) + " x b " +
                                       shape_to_string(sb) + " (K " + std::to_string(k1) + " vs " +
                                       std::to_string(k2) + ")");
  Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  auto batch = ir::broadcast_shapes(ba, bb);
  if (!batch)
    fail(ErrorCode::ShapeMismatch, "matmul: batch dimensions of a " + shape_to_string(sa) + " and b " +
                                       shape_to_string(sb) + " do not broadcast");
  Shape out = *batch;
  out.push_back(sa[sa.size() - 2]);
  out.push_back(sb[sb.size() - 1]);
  check_shape(out, "matmul");
  Node n;
  n.op = Op::MatMul;
  n.in = {a.id, b.id};
  n.shape = out;
  return push(*impl_, std::move(n));
}

Value Graph::add(Value a, Value b) { return binary(*impl_, Op::Add, a, b); }
Value Graph::sub(Value a, Value b) { return binary(*impl_, Op::Sub, a, b); }
Value Graph::mul(Value a, Value b) { return binary(*impl_, Op::Mul, a, b); }
Value Graph::div(Value a, Value b) { return binary(*impl_, Op::Div, a, b); }
Value Graph::maximum(Value a, Value b) { return binary(*impl_, Op::Maximum, a, b); }
Value Graph::minimum(Value a, Value b) { return binary(*impl_, Op::Minimum, a, b); }
Value Graph::pow(Value x, Value y) { return binary(*impl_, Op::Pow, x, y); }
Value Graph::equal(Value a, Value b) { return binary(*impl_, Op::Equal, a, b); }
Value Graph::less(Value a, Value b) { return binary(*impl_, Op::Less, a, b); }
Value Graph::greater(Value a, Value b) { return binary(*impl_, Op::Greater, a, b); }
Value Graph::less_equal(Value a, Value b) { return binary(*impl_, Op::LessEqual, a, b); }
Value Graph::greater_equal(Value a, Value b) { return binary(*impl_, Op::GreaterEqual, a, b); }

Value Graph::where(Value cond, Value a, Value b) {
  const Shape& sc = node_of(*impl_, cond, "where").shape;
  const Shape& sa = node_of(*impl_, a, "where").shape;
  const Shape& sb = node_of(*impl_, b, "where").shape;
  auto ab = ir::broadcast_shapes(sa, sb);
  auto out = ab ? ir::broadcast_shapes(sc, *ab) : std::nullopt;
  if (!out)
    fail(ErrorCode::ShapeMismatch, "where: shapes " + shape_to_string(sc) + " (cond), " + shape_to_string(sa) +
                                       " (a) and " + shape_to_string(sb) +
                                       " (b) do not broadcast (each dimension must match or be 1, aligned from the right)");
  check_shape(*out, "where");
  Node n;
  n.op = Op::Where;
  n.in = {cond.id, a.id, b.id};
  n.shape = *out;
  return push(*impl_, std::move(n));
}

Value Graph::relu(Value x) { return unary(*impl_, Op::Relu, x); }
Value Graph::gelu(Value x) { return unary(*impl_, Op::Gelu, x); }
Value Graph::gelu_tanh(Value x) { return unary(*impl_, Op::GeluTanh, x); }
Value Graph::silu(Value x) { return unary(*impl_, Op::Silu, x); }
Value Graph::sigmoid(Value x) { return unary(*impl_, Op::Sigmoid, x); }
Value Graph::tanh(Value x) { return unary(*impl_, Op::Tanh, x); }
Value Graph::exp(Value x) { return unary(*impl_, Op::Exp, x); }
Value Graph::log(Value x) { return unary(*impl_, Op::Log, x); }
Value Graph::sqrt(Value x) { return unary(*impl_, Op::Sqrt, x); }
Value Graph::rsqrt(Value x) { return unary(*impl_, Op::Rsqrt, x); }
Value Graph::neg(Value x) { return unary(*impl_, Op::Neg, x); }
Value Graph::abs(Value x) { return unary(*impl_, Op::Abs, x); }
Value Graph::erf(Value x) { return unary(*impl_, Op::Erf, x); }
Value Graph::sin(Value x) { return unary(*impl_, Op::Sin, x); }
Value Graph::cos(Value x) { return unary(*impl_, Op::Cos, x); }
Value Graph::logical_not(Value x) { return unary(*impl_, Op::LogicalNot, x); }

Value Graph::softmax(Value x, int axis) {
  const Shape& s = node_of(*impl_, x, "softmax").shape;
  int a = normalize_axis(axis, s.size(), "softmax", s);
  Node n;
  n.op = Op::Softmax;
  n.in = {x.id};
  n.shape = s;
  n.ints = {a};
  return push(*impl_, std::move(n));
}

namespace {
void check_norm_vector(const Shape& xs, const Shape& vs, const char* op, const char* what) {
  if (vs.size() != 1 || vs[0] != xs.back())
    fail(ErrorCode::ShapeMismatch, std::string(op) + ": " + what + " must have shape [" + std::to_string(xs.back()) +
                                       "] (the last axis of x " + shape_to_string(xs) + "), got " +
                                       shape_to_string(vs));
}
}  // namespace

Value Graph::layer_norm(Value x, Value gamma, Value beta, float eps) {
  const Shape& s = node_of(*impl_, x, "layer_norm").shape;
  if (s.empty()) fail(ErrorCode::ShapeMismatch, "layer_norm: x must have rank >= 1, got []");
  check_norm_vector(s, node_of(*impl_, gamma, "layer_norm").shape, "layer_norm", "gamma");
  check_norm_vector(s, node_of(*impl_, beta, "layer_norm").shape, "layer_norm", "beta");
  if (!(eps >= 0.f) || !std::isfinite(eps))
    fail(ErrorCode::InvalidArgument, "layer_norm: eps must be finite and >= 0, got " + std::to_string(eps));
  Node n;
  n.op = Op::LayerNorm;
  n.in = {x.id, gamma.id, beta.id};
  n.shape = s;
  n.eps = eps;
  return push(*impl_, std::move(n));
}

Value Graph::rms_norm(Value x, Value gamma, float eps) {
  const Shape& s = node_of(*impl_, x, "rms_norm").shape;
  if (s.empty()) fail(ErrorCode::ShapeMismatch, "rms_norm: x must have rank >= 1, got []");
  check_norm_vector(s, node_of(*impl_, gamma, "rms_norm").shape, "rms_norm", "gamma");
  if (!(eps >= 0.f) || !std::isfinite(eps))
    fail(ErrorCode::InvalidArgument, "rms_norm: eps must be finite and >= 0, got " + std::to_string(eps));
  Node n;
  n.op = Op::RmsNorm;
  n.in = {x.id, gamma.id};
  n.shape = s;
  n.eps = eps;
  return push(*impl_, std::move(n));
}

Value Graph::sum(Value x, std::vector<int> axes, bool keep_dims) {
  return reduce(*impl_, Op::ReduceSum, x, std::move(axes), keep_dims);
}
Value Graph::mean(Value x, std::vector<int> axes, bool keep_dims) {
  return reduce(*impl_, Op::ReduceMean, x, std::move(axes), keep_dims);
}
Value Graph::max(Value x, std::vector<int> axes, bool keep_dims) {
  return reduce(*impl_, Op::ReduceMax, x, std::move(axes), keep_dims);
}

Value Graph::reshape(Value x, Shape shape) {
  const Shape& s = node_of(*impl_, x, "reshape").shape;
  int64_t known = 1;
  int infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) fail(ErrorCode::InvalidArgument, "reshape: only one dimension may be -1, got " + shape_to_string(shape));
      infer = static_cast<int>(i);
    } else if (shape[i] < 1) {
      fail(ErrorCode::InvalidArgument, "reshape: dimensions must be >= 1 or -1, got " + shape_to_string(shape));
    } else {
      if (shape[i] > shape_numel(s) / known)  // more values than x has: refused below, without overflow
        fail(ErrorCode::ShapeMismatch, "reshape: cannot reshape " + shape_to_string(s) + " (" +
                                           std::to_string(shape_numel(s)) + " values) to " + shape_to_string(shape));
      known *= shape[i];
    }
  }
  int64_t total = shape_numel(s);
  Shape out = shape;
  if (infer >= 0) {
    if (known == 0 || total % known != 0)
      fail(ErrorCode::ShapeMismatch, "reshape: cannot reshape " + shape_to_string(s) + " (" + std::to_string(total) +
                                         " values) to " + shape_to_string(shape));
    out[infer] = total / known;
  }
  check_shape(out, "reshape");
  if (shape_numel(out) != total)
    fail(ErrorCode::ShapeMismatch, "reshape: cannot reshape " + shape_to_string(s) + " (" + std::to_string(total) +
                                       " values) to " + shape_to_string(shape) + " (" +
                                       std::to_string(shape_numel(out)) + " values)");
  Node n;
  n.op = Op::Reshape;
  n.in = {x.id};
  n.shape = out;
  return push(*impl_, std::move(n));
}

Value Graph::transpose(Value x, std::vector<int> perm) {
  const Shape& s = node_of(*impl_, x, "transpose").shape;
  std::vector<int64_t> p(perm.begin(), perm.end());
  std::vector<int64_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  bool ok = p.size() == s.size();
  for (size_t i = 0; ok && i < sorted.size(); ++i) ok = sorted[i] == static_cast<int64_t>(i);
  if (!ok) {
    std::string ps = "[";
    for (size_t i = 0; i < perm.size(); ++i) ps += (i ? ", " : "") + std::to_string(perm[i]);
    fail(ErrorCode::InvalidArgument, "transpose: perm " + ps + "] is not a permutation of the " +
                                         std::to_string(s.size()) + " axes of " + shape_to_string(s));
  }
  Shape out(s.size());
  for (size_t i = 0; i < s.size(); ++i) out[i] = s[p[i]];
  Node n;
  n.op = Op::Transpose;
  n.in = {x.id};
  n.shape = out;
  n.ints = p;
  return push(*impl_, std::move(n));
}

Value Graph::slice(Value x, int axis, int64_t start, int64_t length) {
  const Shape& s = node_of(*impl_, x, "slice").shape;
  int a = normalize_axis(axis, s.size(), "slice", s);
  if (start < 0 || length < 1 || start > s[a] || length > s[a] - start)
    fail(ErrorCode::OutOfRange, "slice: start " + std::to_string(start) + ", length " + std::to_string(length) +
                                    " does not fit axis " + std::to_string(a) + " of " + shape_to_string(s) +
                                    " (need 0 <= start, 1 <= length, start + length <= " + std::to_string(s[a]) + ")");
  Shape out = s;
  out[a] = length;
  Node n;
  n.op = Op::Slice;
  n.in = {x.id};
  n.shape = out;
  n.ints = {a, start, length};
  return push(*impl_, std::move(n));
}

Value Graph::concat(std::vector<Value> xs, int axis) {
  if (xs.empty()) fail(ErrorCode::InvalidArgument, "concat: needs at least 1 input");
  const Shape& s0 = node_of(*impl_, xs[0], "concat").shape;
  int a = normalize_axis(axis, s0.size(), "concat", s0);
  Shape out = s0;
  for (size_t i = 1; i < xs.size(); ++i) {
    const Shape& si = node_of(*impl_, xs[i], "concat").shape;
    bool ok = si.size() == s0.size();
    for (size_t d = 0; ok && d < s0.size(); ++d) ok = static_cast<int>(d) == a || si[d] == s0[d];
    if (!ok)
      fail(ErrorCode::ShapeMismatch, "concat: input " + std::to_string(i) + " has shape " + shape_to_string(si) +
                                         ", which does not match " + shape_to_string(s0) + " outside axis " +
                                         std::to_string(a));
    out[a] += si[a];
    if (out[a] > kMaxElements)  // each dim is <= 2^40, so the sum cannot overflow before this check
      fail(ErrorCode::OutOfRange, "concat: axis " + std::to_string(a) + " would hold more than 2^40 elements");
  }
  check_shape(out, "concat");
  Node n;
  n.op = Op::Concat;
  for (Value v : xs) n.in.push_back(v.id);
  n.shape = out;
  n.ints = {a};
  return push(*impl_, std::move(n));
}

Value Graph::gather(Value table, Value indices) {
  const Shape& st = node_of(*impl_, table, "gather").shape;
  const Shape& si = node_of(*impl_, indices, "gather").shape;
  if (st.size() != 2)
    fail(ErrorCode::ShapeMismatch, "gather: table must be [V, D], got " + shape_to_string(st));
  Shape out = si;
  out.push_back(st[1]);
  check_shape(out, "gather");
  Node n;
  n.op = Op::Gather;
  n.in = {table.id, indices.id};
  n.shape = out;
  return push(*impl_, std::move(n));
}

Value Graph::attention(Value q, Value k, Value v, AttentionOptions options) {
  const Shape& sq = node_of(*impl_, q, "attention").shape;
  const Shape& sk = node_of(*impl_, k, "attention").shape;
  const Shape& sv = node_of(*impl_, v, "attention").shape;
  auto shapes = "q " + shape_to_string(sq) + ", k " + shape_to_string(sk) + ", v " + shape_to_string(sv);
  if (sq.size() != 3 || sk.size() != 3 || sv.size() != 3)
    fail(ErrorCode::ShapeMismatch, "attention: q, k and v must be [B, S, heads*head_dim], got " + shapes);
  if (options.heads < 1)
    fail(ErrorCode::InvalidArgument, "attention: heads must be >= 1, got " + std::to_string(options.heads));
  if (sk[0] != sq[0] || sv[0] != sq[0])
    fail(ErrorCode::ShapeMismatch, "attention: batch sizes differ: " + shapes);
  if (sk[1] != sv[1]) fail(ErrorCode::ShapeMismatch, "attention: k and v need the same length Sk: " + shapes);
  if (sk[2] != sq[2]) fail(ErrorCode::ShapeMismatch, "attention: q and k need the same width: " + shapes);
  if (sq[2] % options.heads != 0 || sv[2] % options.heads != 0)
    fail(ErrorCode::ShapeMismatch, "attention: widths must be divisible by heads=" + std::to_string(options.heads) +
                                       ": " + shapes);
  if (options.scale && !std::isfinite(*options.scale))
    fail(ErrorCode::InvalidArgument, "attention: scale must be finite");
  Node n;
  n.op = Op::Attention;
  n.in = {q.id, k.id, v.id};
  if (options.key_mask) {
    const Shape& sm = node_of(*impl_, *options.key_mask, "attention").shape;
    if (sm != Shape{sq[0], sk[1]})
      fail(ErrorCode::ShapeMismatch, "attention: key_mask must be [B, Sk] = " +
                                         shape_to_string({sq[0], sk[1]}) + ", got " + shape_to_string(sm));
    n.in.push_back(options.key_mask->id);
    n.has_mask = true;
  }
  n.shape = {sq[0], sq[1], sv[2]};
  check_shape(n.shape, "attention");
  n.heads = options.heads;
  n.causal = options.causal;
  n.scale = options.scale;
  return push(*impl_, std::move(n));
}

void Graph::output(std::string name, Value v) {
  node_of(*impl_, v, "output");
  if (name.empty()) fail(ErrorCode::InvalidArgument, "output: the name must not be empty");
  for (const auto& o : impl_->outputs)
    if (o.first == name) fail(ErrorCode::InvalidArgument, "output: the name '" + name + "' is already used");
  impl_->outputs.emplace_back(std::move(name), v.id);
}

Shape Graph::shape(Value v) const { return node_of(*impl_, v, "shape").shape; }
size_t Graph::node_count() const { return impl_->nodes.size(); }

std::vector<std::pair<std::string, Shape>> Graph::inputs() const {
  std::vector<std::pair<std::string, Shape>> out;
  for (const Node& n : impl_->nodes)
    if (n.op == Op::Input) out.emplace_back(n.name, n.shape);
  return out;
}

std::vector<std::pair<std::string, Shape>> Graph::outputs() const {
  std::vector<std::pair<std::string, Shape>> out;
  for (const auto& [name, id] : impl_->outputs) out.emplace_back(name, impl_->nodes[id].shape);
  return out;
}
std::string Graph::to_text() const { return ir::to_text(*impl_); }

}  // namespace rungs
