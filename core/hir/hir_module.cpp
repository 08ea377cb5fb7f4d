// SPDX-License-Identifier: Apache-2.0
// core/hir/hir_module.cpp: blocks lower to primitive ops as they are added, so a HirModule is a
// Graph under construction plus the list of params its blocks created. The passes (fusion first)
// then turn the primitive ops back into fused kernels.
#include "rungs/hir.hpp"

#include "core/check.hpp"
#include "core/ir/graph_access.hpp"

namespace rungs {

namespace {

Value activate(Graph& g, Value x, Activation act) {
  switch (act) {
    case Activation::None: return x;
    case Activation::Relu: return g.relu(x);
    case Activation::Gelu: return g.gelu(x);
    case Activation::GeluTanh: return g.gelu_tanh(x);
    case Activation::Silu: return g.silu(x);
    case Activation::Tanh: return g.tanh(x);
    case Activation::Sigmoid: return g.sigmoid(x);
  }
  return x;
}

void check_block_name(const Graph& g, const std::string& name, const char* block) {
  if (name.empty()) fail(ErrorCode::InvalidArgument, std::string(block) + ": the block name must not be empty");
  std::string prefix = name + ".";
  for (const ir::Node& n : ir::impl_of(g).nodes)
    if (n.op == ir::Op::Param && n.name.compare(0, prefix.size(), prefix) == 0)
      fail(ErrorCode::InvalidArgument, std::string(block) + ": the name '" + name +
                                           "' is already used by another block (param '" + n.name +
                                           "'); give each block its own name");
}

// Runs a block's lowering; if it throws part way (a name clash, a shape the builder refuses), the
// nodes it added are removed again, so a failed call leaves the module unchanged.
template <class F>
Value rollback_on_error(Graph& g, F&& lower) {
  const size_t nodes = g.node_count(), outputs = ir::impl_of(g).outputs.size();
  try {
    return lower();
  } catch (...) {
    ir::impl_of(g).nodes.resize(nodes);
    ir::impl_of(g).outputs.resize(outputs);
    throw;
  }
}

}  // namespace

HirModule::HirModule() = default;

Value HirModule::add_param(const std::string& name, Shape shape) { return graph_.param(name, std::move(shape)); }

Value HirModule::input(std::string name, Shape shape) { return graph_.input(std::move(name), std::move(shape)); }

Value HirModule::linear(Value x, std::string name, int64_t out_features, Activation act, bool bias) {
  check_block_name(graph_, name, "linear");
  Shape xs = graph_.shape(x);
  if (xs.empty()) fail(ErrorCode::ShapeMismatch, "linear '" + name + "': x must have rank >= 1, got []");
  if (out_features < 1)
    fail(ErrorCode::InvalidArgument, "linear '" + name + "': out_features must be >= 1, got " +
                                         std::to_string(out_features));
  return rollback_on_error(graph_, [&] {
    Value w = add_param(name + ".weight", {xs.back(), out_features});
    Value y = xs.size() == 1 ? graph_.matmul(graph_.reshape(x, {1, xs[0]}), w) : graph_.matmul(x, w);
    if (xs.size() == 1) y = graph_.reshape(y, {out_features});
    if (bias) y = graph_.add(y, add_param(name + ".bias", {out_features}));
    return activate(graph_, y, act);
  });
}

Value HirModule::layer_norm(Value x, std::string name, float eps) {
  check_block_name(graph_, name, "layer_norm");
  Shape xs = graph_.shape(x);
  if (xs.empty()) fail(ErrorCode::ShapeMismatch, "layer_norm '" + name + "': x must have rank >= 1, got []");
  return rollback_on_error(graph_, [&] {
    Value gamma = add_param(name + ".gamma", {xs.back()});
    Value beta = add_param(name + ".beta", {xs.back()});
    return graph_.layer_norm(x, gamma, beta, eps);
  });
}

Value HirModule::rms_norm(Value x, std::string name, float eps) {
  check_block_name(graph_, name, "rms_norm");
  Shape xs = graph_.shape(x);
  if (xs.empty()) fail(ErrorCode::ShapeMismatch, "rms_norm '" + name + "': x must have rank >= 1, got []");
  return rollback_on_error(graph_, [&] {
    Value gamma = add_param(name + ".gamma", {xs.back()});
    return graph_.rms_norm(x, gamma, eps);
  });
}

Value HirModule::self_attention(Value x, std::string name, int heads, std::optional<Value> key_mask, bool causal) {
  check_block_name(graph_, name, "self_attention");
  Shape xs = graph_.shape(x);
  if (xs.size() != 3)
    fail(ErrorCode::ShapeMismatch, "self_attention '" + name + "': x must be [B, S, D], got " + shape_to_string(xs));
  if (heads < 1 || xs[2] % heads != 0)
    fail(ErrorCode::InvalidArgument, "self_attention '" + name + "': heads=" + std::to_string(heads) +
                                         " must be >= 1 and divide the width " + std::to_string(xs[2]));
  return rollback_on_error(graph_, [&] {
    int64_t d = xs[2];
    Value q = linear(x, name + ".q", d);
    Value k = linear(x, name + ".k", d);
    Value v = linear(x, name + ".v", d);
    AttentionOptions opt;
    opt.heads = heads;
    opt.causal = causal;
    opt.key_mask = key_mask;
    Value a = graph_.attention(q, k, v, opt);
    return linear(a, name + ".o", d);
  });
}

Value HirModule::mlp(Value x, std::string name, int64_t hidden, Activation act) {
  check_block_name(graph_, name, "mlp");
  Shape xs = graph_.shape(x);
  if (xs.empty()) fail(ErrorCode::ShapeMismatch, "mlp '" + name + "': x must have rank >= 1, got []");
  return rollback_on_error(graph_, [&] {
    Value h = linear(x, name + ".up", hidden, act);
    return linear(h, name + ".down", xs.back());
  });
}

Value HirModule::embedding(Value ids, std::string name, int64_t vocab, int64_t dim) {
  check_block_name(graph_, name, "embedding");
  graph_.shape(ids);  // validates the handle
  if (vocab < 1 || dim < 1)
    fail(ErrorCode::InvalidArgument, "embedding '" + name + "': vocab and dim must be >= 1, got " +
                                         std::to_string(vocab) + " and " + std::to_string(dim));
  return rollback_on_error(graph_, [&] {
    Value table = add_param(name + ".table", {vocab, dim});
    return graph_.gather(table, ids);
  });
}

Value HirModule::mean_pool(Value x, std::optional<Value> mask) {
  Shape xs = graph_.shape(x);
  if (xs.size() != 3) fail(ErrorCode::ShapeMismatch, "mean_pool: x must be [B, S, D], got " + shape_to_string(xs));
  if (!mask) return graph_.mean(x, {1});
  Shape ms = graph_.shape(*mask);
  if (ms != Shape{xs[0], xs[1]})
    fail(ErrorCode::ShapeMismatch, "mean_pool: mask must be [B, S] = " + shape_to_string({xs[0], xs[1]}) +
                                       " for x " + shape_to_string(xs) + ", got " + shape_to_string(ms));
  // sum(x * m) / max(sum(m), tiny): rows with mask 0 add nothing; an all-masked row pools to 0.
  Value m = graph_.reshape(*mask, {xs[0], xs[1], 1});
  Value total = graph_.sum(graph_.mul(x, m), {1});
  Value count = graph_.sum(m, {1});
  Value safe = graph_.maximum(count, graph_.constant({1e-6f}, {1}));
  return graph_.div(total, safe);
}

Value HirModule::add(Value a, Value b) { return graph_.add(a, b); }

Value HirModule::mir(std::function<Value(Graph&, std::span<const Value>)> op, std::vector<Value> args) {
  if (!op) fail(ErrorCode::InvalidArgument, "mir: the op function is empty");
  for (Value v : args) graph_.shape(v);
  return rollback_on_error(graph_, [&] { return op(graph_, std::span<const Value>(args)); });
}

void HirModule::output(std::string name, Value v) { graph_.output(std::move(name), v); }

Shape HirModule::shape(Value v) const { return graph_.shape(v); }

Graph HirModule::lower() const { return graph_; }

std::vector<std::pair<std::string, Shape>> HirModule::params() const {
  std::vector<std::pair<std::string, Shape>> out;
  for (const ir::Node& n : ir::impl_of(graph_).nodes)
    if (n.op == ir::Op::Param) out.emplace_back(n.name, n.shape);
  return out;
}

}  // namespace rungs
