// SPDX-License-Identifier: Apache-2.0
#include "core/passes/fuse_add_norm.hpp"

#include "core/passes/rewrite.hpp"

namespace rungs::passes {

using ir::Node;
using ir::Op;

bool fuse_add_norm(ir::GraphImpl& g) {
  Rewriter rw(g);
  for (uint32_t id = 0; id < g.nodes.size(); ++id) {
    const Node& norm = g.nodes[id];
    if (norm.op != Op::LayerNorm && norm.op != Op::RmsNorm) continue;
    const uint32_t x = norm.in[0];
    const Node& add = g.nodes[x];
    if (add.op != Op::Add || rw.sole_consumer(x) != id) continue;
    if (g.nodes[add.in[0]].shape != add.shape || g.nodes[add.in[1]].shape != add.shape) continue;

    Node fused;
    fused.op = Op::FusedAddNorm;
    fused.norm = norm.op;
    fused.eps = norm.eps;
    fused.shape = norm.shape;
    fused.in = {add.in[0], add.in[1]};
    fused.in.insert(fused.in.end(), norm.in.begin() + 1, norm.in.end());  // gamma, [beta]
    rw.replace(id, std::move(fused));
  }
  return rw.finish();
}

}  // namespace rungs::passes
