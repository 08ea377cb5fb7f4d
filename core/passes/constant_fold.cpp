// SPDX-License-Identifier: Apache-2.0
#include "core/passes/constant_fold.hpp"

#include <memory>
#include <utility>
#include <vector>

#include "core/check.hpp"
#include "core/passes/rewrite.hpp"

namespace rungs::passes {

using ir::Node;
using ir::Op;

bool fold_constants(ir::GraphImpl& g, const ConstantEvaluator& evaluate) {
  Rewriter rw(g);
  for (uint32_t id = 0; id < g.nodes.size(); ++id) {
    const Node& n = g.nodes[id];
    if (n.op == Op::Input || n.op == Op::Param || n.op == Op::Constant || n.in.empty()) continue;
    bool all_constant = true;
    for (uint32_t src : n.in) all_constant = all_constant && g.nodes[src].op == Op::Constant;
    if (!all_constant || shape_numel(n.shape) > kMaxFoldedElements) continue;

    std::vector<float> out = evaluate(g, id);
    internal_check(out.size() == static_cast<size_t>(shape_numel(n.shape)),
                   "fold_constants: the evaluator returned a value of the wrong size");

    Node c;
    c.op = Op::Constant;
    c.shape = n.shape;
    c.data = std::make_shared<const std::vector<float>>(std::move(out));
    rw.replace(id, std::move(c));
  }
  return rw.finish();
}

}  // namespace rungs::passes
