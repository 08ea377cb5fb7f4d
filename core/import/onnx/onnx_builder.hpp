// SPDX-License-Identifier: Apache-2.0
// core/import/onnx/onnx_builder.hpp: the ONNX frontend's Builder, private to core/import/onnx.
//
// build_module (onnx_frontend.cpp) walks a graph's nodes with a Builder. Its member functions are
// defined by family, one file each: onnx_builder.cpp (errors, access, values, the op table),
// onnx_ops_elementwise.cpp, onnx_ops_shape.cpp (constants and shapes), onnx_ops_linalg.cpp (linear
// algebra and norms), onnx_ops_gather.cpp (indexed gather and scatter) and onnx_ops_tf.cpp (the
// kTfDomain ops). Only those files include this header; namespace detail holds what they share,
// which would otherwise sit in an anonymous namespace.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/check.hpp"
#include "core/import/onnx/onnx_graph.hpp"
#include "core/model/frontend.hpp"

namespace rungs::onnx_import::detail {

// The ops build() maps (the list docs/onnx.md shows and unsupported-op errors print).
const std::vector<std::string>& supported_ops();

std::string join(const std::vector<std::string>& xs);

inline std::string ints_text(const std::vector<int64_t>& xs) { return shape_to_string(xs); }

// A value while building: a constant the frontend knows (folded shape arithmetic, small
// initializers), a weight (a float initializer: a Graph param, never folded) or a Graph value.
struct Val {
  enum class Where {
    Const,
    Weight,
    Runtime
  } where = Where::Runtime;
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

class Builder {
 public:
  Builder(const OnnxGraph& g, const std::string& source, const std::map<std::string, int64_t>& symbols,
          std::vector<model::Frontend::Role>* roles)
      : g_(g), source_(source), symbols_(symbols), roles_(roles) {}

  // Builds the module; the graph's inputs are declared in order.
  HirModule build();

 private:
  const OnnxGraph& g_;
  const std::string& source_;
  const std::map<std::string, int64_t>& symbols_;
  std::vector<model::Frontend::Role>* roles_;
  Graph* graph_ = nullptr;
  std::map<std::string, Val> env_;
  std::map<std::string, Value> params_;  // weight -> its param (created once)
  const Node* node_ = nullptr;

  // --------------------------------------------------------- errors and access (onnx_builder.cpp)
  [[noreturn]] void error(ErrorCode code, const std::string& what) const;
  const Val& get(const std::string& name);
  bool has_input(size_t i) const { return node_->inputs.size() > i && !node_->inputs[i].empty(); }
  const Val& in(size_t i);
  void set(size_t i, Val v);
  const Attr* attr(const std::string& name) const;
  int64_t attr_i(const std::string& name, int64_t def) const;
  double attr_f(const std::string& name, double def) const;
  std::optional<std::vector<int64_t>> attr_ints(const std::string& name) const;
  const Tensor& const_in(size_t i, const char* what);
  std::vector<int64_t> ints_in(size_t i, const char* what);
  int64_t int_of(double d, const char* what) const;  // to_int64, NaN an error naming `what`
  int norm_axis(int64_t axis, size_t rank) const;

  // -------------------------------------------------------------------- values (onnx_builder.cpp)
  static Val make_const(Tensor t);
  Val make_rt(Value x, Kind kind, int origin = -1) const;
  Value mat(const Val& v);
  Tensor checked_tensor(Kind kind, Shape shape) const;
  static double round_to(Kind kind, double x);
  bool all_const(size_t first = 0);
  Tensor fold_binary(const Tensor& a, const Tensor& b, Kind kind, const std::function<double(double, double)>& f);
  Tensor reshaped(Tensor t, Shape s);
  Shape broadcast_shape(const Shape& a, const Shape& b);

  // -------------------------------------------------------------- the op table (onnx_builder.cpp)
  void run(const Node& n);
  [[noreturn]] void unsupported() const;
  void dispatch(const std::string& op);

  // ------------------------------------------------------- elementwise (onnx_ops_elementwise.cpp)
  Kind arith_kind(const Val& a, const Val& b) const;
  void binary(const std::string& op, const std::function<double(double, double)>& f);
  void pow_op();
  void comparison(const std::string& op, const std::function<double(double, double)>& f);
  void not_op();
  void where_op();
  void unary_op(const std::string& op);
  void gelu();
  void clip();

  // ---------------------------------------------------- constants and shapes (onnx_ops_shape.cpp)
  void identity();
  void constant();
  void shape_op();
  void constant_of_shape();
  void range();
  void cast();
  Val reshape_val(const Val& x, const Shape& s);
  void reshape_op();
  void reshape_like(const std::string& op);
  void transpose();
  Tensor concat_tensors(const std::vector<const Tensor*>& ts, int axis);
  void concat();
  Value slice_rt(Value x, int axis, int64_t start, int64_t len);
  Value take(Value x, const Shape& xs, int axis, Value ids, const Shape& ids_shape);
  void gather();
  void slice();
  void split();
  void expand();

  // ----------------------------------------------- linear algebra and norms (onnx_ops_linalg.cpp)
  void matmul();
  void gemm();
  void softmax();
  void reduce(const std::string& op);
  Tensor fold_reduce(const std::string& op, const Tensor& x, const std::vector<int>& ax, bool keep);
  void layer_norm();

  // --------------------------------------------- indexed gather and scatter (onnx_ops_gather.cpp)
  void non_zero();
  std::vector<int64_t> nd_rows(const Tensor& indices, const Shape& data, int64_t* k_out);
  Value pick_rows(Value table, int64_t n, const std::vector<int64_t>& ids);
  void gather_nd();
  void scatter_nd();

  // -------------------------------------------------- TensorFlow ops, kTfDomain (onnx_ops_tf.cpp)
  void batch_matmul();
};

}  // namespace rungs::onnx_import::detail
