// SPDX-License-Identifier: Apache-2.0
// core/passes/rewrite.hpp: the bookkeeping every fusion pass shares.
//
// Why: a fusion pass matches a pattern ending at a "root" node and replaces the root, in place, by
// one fused node whose inputs are the pattern's external inputs. The absorbed intermediates then
// have no consumer left. Deciding whether the *next* pattern may absorb a node needs the consumer
// counts as they are after the previous rewrite, so the Rewriter keeps them current (a node that
// loses its last consumer releases its own inputs), and at the end removes the dead nodes and
// restores topological order if a pass appended helper nodes (reshapes, transposes) after a root.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/ir/graph_impl.hpp"

namespace rungs::passes {

class Rewriter {
 public:
  explicit Rewriter(ir::GraphImpl& g);

  ir::GraphImpl& graph() { return g_; }
  const ir::GraphImpl& graph() const { return g_; }
  const ir::Node& node(uint32_t id) const { return g_.nodes[id]; }
  // Consumers of `id`: node inputs (counted once per use) plus graph outputs.
  uint32_t uses(uint32_t id) const { return uses_[id]; }
  // The node that reads `id`, when that is its one and only use (not a graph output).
  std::optional<uint32_t> sole_consumer(uint32_t id) const;

  // Replaces node `root` by `fused` (same shape). Inputs of `fused` must be existing nodes.
  void replace(uint32_t root, ir::Node fused);
  // Appends a helper node (it may come after the root that reads it; finish() reorders).
  uint32_t append(ir::Node n);

  // Drops dead nodes (keeping inputs and params), restores topological order, renumbers.
  // Returns whether any rewrite happened.
  bool finish();

 private:
  void release(uint32_t id);

  ir::GraphImpl& g_;
  std::vector<uint32_t> uses_;
  std::vector<std::vector<uint32_t>> readers_;  // live nodes reading each node (once per use)
  bool changed_ = false;
  bool appended_ = false;
};

// Small pattern-matching helpers.
bool is_scalar_constant(const ir::Node& n);                        // a Constant with one element
std::optional<float> scalar_constant(const ir::GraphImpl& g, uint32_t id);

}  // namespace rungs::passes
