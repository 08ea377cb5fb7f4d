// SPDX-License-Identifier: Apache-2.0
// rungs/hir.hpp: the block-level builder. A HirModule lowers to a Graph of primitive ops and
// creates its own named params (name.weight [in, out], name.bias [out], name.gamma, name.beta,
// name.table, and name.q / name.k / name.v / name.o for attention projections).
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "rungs/graph.hpp"
#include "rungs/types.hpp"

namespace rungs {

class HirModule {
 public:
  HirModule();

  Value input(std::string name, Shape shape);
  // x [..., in] -> [..., out_features]; params name.weight [in, out] and name.bias [out].
  Value linear(Value x, std::string name, int64_t out_features, Activation act = Activation::None,
               bool bias = true);
  Value layer_norm(Value x, std::string name, float eps = 1e-5f);  // name.gamma, name.beta
  Value rms_norm(Value x, std::string name, float eps = 1e-6f);    // name.gamma
  // x [B, S, D]: q, k, v, o projections (linear blocks name.q, name.k, name.v, name.o), heads
  // heads; key_mask [B, S] keeps keys >= 0.5.
  Value self_attention(Value x, std::string name, int heads, std::optional<Value> key_mask = {},
                       bool causal = false);
  // linear name.up (hidden, act) then linear name.down (back to the input width).
  Value mlp(Value x, std::string name, int64_t hidden, Activation act = Activation::Gelu);
  Value embedding(Value ids, std::string name, int64_t vocab, int64_t dim);  // name.table [vocab, dim]
  // [B, S, D] -> [B, D]; with mask [B, S], rows with mask < 0.5 are excluded from the mean.
  Value mean_pool(Value x, std::optional<Value> mask = {});
  Value add(Value a, Value b);  // residual
  // Escape hatch: build primitive ops directly on the module's graph.
  Value mir(std::function<Value(Graph&, std::span<const Value>)> op, std::vector<Value> args);
  void output(std::string name, Value v);

  Shape shape(Value v) const;
  Graph lower() const;
  std::vector<std::pair<std::string, Shape>> params() const;  // every param it created, in order
                                                              // (those made through mir too)

 private:
  Value add_param(const std::string& name, Shape shape);
  Graph graph_;
};

}  // namespace rungs
