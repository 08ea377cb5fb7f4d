// SPDX-License-Identifier: Apache-2.0
#include "core/passes/dead_code.hpp"

namespace rungs::passes {

bool eliminate_dead_code(ir::GraphImpl& g) {
  const size_t n = g.nodes.size();
  std::vector<bool> live(n, false);
  for (const auto& o : g.outputs) live[o.second] = true;
  for (size_t i = n; i-- > 0;) {
    const ir::Node& node = g.nodes[i];
    if (node.op == ir::Op::Input || node.op == ir::Op::Param) live[i] = true;
    if (!live[i]) continue;
    for (uint32_t src : node.in) live[src] = true;
  }
  std::vector<uint32_t> remap(n, 0);
  std::vector<ir::Node> kept;
  kept.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (!live[i]) continue;
    remap[i] = static_cast<uint32_t>(kept.size());
    kept.push_back(std::move(g.nodes[i]));
    for (uint32_t& src : kept.back().in) src = remap[src];
  }
  bool changed = kept.size() != n;
  g.nodes = std::move(kept);
  for (auto& o : g.outputs) o.second = remap[o.second];
  return changed;
}

}  // namespace rungs::passes
