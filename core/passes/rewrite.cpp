// SPDX-License-Identifier: Apache-2.0
#include "core/passes/rewrite.hpp"

#include <algorithm>

#include "core/check.hpp"

namespace rungs::passes {

using ir::Node;
using ir::Op;

Rewriter::Rewriter(ir::GraphImpl& g) : g_(g), uses_(ir::use_counts(g)), readers_(g.nodes.size()) {
  for (uint32_t i = 0; i < g.nodes.size(); ++i)
    for (uint32_t src : g.nodes[i].in) readers_[src].push_back(i);
}

std::optional<uint32_t> Rewriter::sole_consumer(uint32_t id) const {
  if (uses_[id] != 1 || readers_[id].size() != 1) return std::nullopt;
  return readers_[id][0];
}

void Rewriter::release(uint32_t id) {
  // Iterative: a long dead chain must not recurse once per node.
  std::vector<std::pair<uint32_t, uint32_t>> work;  // (node that lost a reader, the reader)
  for (uint32_t src : g_.nodes[id].in) work.emplace_back(src, id);
  while (!work.empty()) {
    auto [src, reader] = work.back();
    work.pop_back();
    internal_check(uses_[src] > 0, "rewrite: use count underflow");
    --uses_[src];
    auto& r = readers_[src];
    auto it = std::find(r.begin(), r.end(), reader);
    internal_check(it != r.end(), "rewrite: reader list out of sync");
    r.erase(it);
    if (uses_[src] == 0)
      for (uint32_t s : g_.nodes[src].in) work.emplace_back(s, src);
  }
}

void Rewriter::replace(uint32_t root, Node fused) {
  internal_check(fused.shape == g_.nodes[root].shape, "rewrite: a fused node must keep the root's shape");
  // Count the new reads before releasing the old ones, so a node both read anyway never drops to 0.
  for (uint32_t src : fused.in) {
    ++uses_[src];
    readers_[src].push_back(root);
  }
  release(root);
  g_.nodes[root] = std::move(fused);
  changed_ = true;
}

uint32_t Rewriter::append(Node n) {
  for (uint32_t src : n.in) {
    ++uses_[src];
    readers_[src].push_back(static_cast<uint32_t>(g_.nodes.size()));
  }
  uint32_t id = g_.add(std::move(n));
  uses_.push_back(0);
  readers_.emplace_back();
  appended_ = true;
  return id;
}

bool Rewriter::finish() {
  if (!changed_ && !appended_) return false;
  const uint32_t n = static_cast<uint32_t>(g_.nodes.size());
  std::vector<bool> live(n, false);
  for (uint32_t i = 0; i < n; ++i) {
    Op op = g_.nodes[i].op;
    live[i] = uses_[i] > 0 || op == Op::Input || op == Op::Param;
  }
  // Emit live nodes in their order, each after its inputs (an iterative depth-first walk), so
  // appended helpers land just before their first reader and the rest keeps its order.
  std::vector<uint32_t> remap(n, UINT32_MAX);
  std::vector<Node> out;
  out.reserve(n);
  std::vector<std::pair<uint32_t, size_t>> stack;
  for (uint32_t start = 0; start < n; ++start) {
    if (!live[start] || remap[start] != UINT32_MAX) continue;
    stack.emplace_back(start, 0);
    while (!stack.empty()) {
      auto& [id, next] = stack.back();
      const Node& node = g_.nodes[id];
      if (next < node.in.size()) {
        uint32_t src = node.in[next++];
        internal_check(live[src], "rewrite: a live node reads a dead one");
        if (remap[src] == UINT32_MAX) stack.emplace_back(src, 0);
        continue;
      }
      uint32_t done = id;
      stack.pop_back();
      if (remap[done] != UINT32_MAX) continue;
      remap[done] = static_cast<uint32_t>(out.size());
      out.push_back(std::move(g_.nodes[done]));
      for (uint32_t& src : out.back().in) src = remap[src];
    }
  }
  g_.nodes = std::move(out);
  for (auto& o : g_.outputs) o.second = remap[o.second];
  uses_ = ir::use_counts(g_);
  readers_.assign(g_.nodes.size(), {});
  for (uint32_t i = 0; i < g_.nodes.size(); ++i)
    for (uint32_t src : g_.nodes[i].in) readers_[src].push_back(i);
  bool changed = changed_;
  changed_ = appended_ = false;
  return changed;
}

bool is_scalar_constant(const Node& n) { return n.op == Op::Constant && n.data && n.data->size() == 1; }

std::optional<float> scalar_constant(const ir::GraphImpl& g, uint32_t id) {
  const Node& n = g.nodes[id];
  if (!is_scalar_constant(n)) return std::nullopt;
  return (*n.data)[0];
}

}  // namespace rungs::passes
