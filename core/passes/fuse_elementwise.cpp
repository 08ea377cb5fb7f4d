// SPDX-License-Identifier: Apache-2.0
#include "core/passes/fuse_elementwise.hpp"

#include <algorithm>
#include <limits>
#include <map>

#include "core/passes/rewrite.hpp"

namespace rungs::passes {

using ir::Instr;
using ir::Node;
using ir::Op;

namespace {

// True when elementwise node `id` is evaluated inside its reader's loop instead of on its own.
bool absorbed(const Rewriter& rw, uint32_t id) {
  if (!ir::is_elementwise(rw.node(id).op)) return false;
  auto c = rw.sole_consumer(id);
  return c && ir::is_elementwise(rw.node(*c).op);
}

}  // namespace

bool fuse_elementwise(ir::GraphImpl& g) {
  Rewriter rw(g);
  const uint32_t n = static_cast<uint32_t>(g.nodes.size());
  // Roots, last first: a root's tree only holds nodes before it that no other tree reads.
  for (uint32_t root = n; root-- > 0;) {
    if (!ir::is_elementwise(g.nodes[root].op) || rw.uses(root) == 0 || absorbed(rw, root)) continue;

    // The tree: the root and every absorbed operand, transitively.
    std::vector<uint32_t> tree{root};
    for (size_t k = 0; k < tree.size(); ++k)
      for (uint32_t src : g.nodes[tree[k]].in)
        if (absorbed(rw, src) && std::find(tree.begin(), tree.end(), src) == tree.end()) tree.push_back(src);
    std::sort(tree.begin(), tree.end());  // ascending ids: a valid evaluation order

    // External inputs get registers 0..inputs-1 in order of first use; scalar constants read by
    // a binary op become immediates (one per instruction, the other operand stays a register).
    std::vector<uint32_t> inputs;
    auto input_reg = [&](uint32_t src) {
      auto it = std::find(inputs.begin(), inputs.end(), src);
      if (it != inputs.end()) return static_cast<int>(it - inputs.begin());
      inputs.push_back(src);
      return static_cast<int>(inputs.size() - 1);
    };
    struct Step {
      Op op;
      int a, b, c;  // >= 0: input index (external) or ~k (tree step k); kImm: the immediate
      float imm;
    };
    constexpr int kImm = std::numeric_limits<int>::min();
    std::vector<Step> steps;
    std::map<uint32_t, int> step_of;
    bool has_imm = false;
    for (uint32_t id : tree) {
      const Node& node = g.nodes[id];
      Step s{node.op, kImm, kImm, kImm, 0.f};
      // Binary and ternary ops may take one scalar constant as an immediate.
      bool binary = ir::is_binary(node.op) || ir::is_ternary(node.op);
      bool imm_used = false;
      auto operand = [&](size_t k) {
        uint32_t src = node.in[k];
        if (auto it = step_of.find(src); it != step_of.end()) return ~it->second;
        if (binary && !imm_used)
          if (auto v = scalar_constant(g, src)) {
            imm_used = true;
            s.imm = *v;
            return kImm;
          }
        return input_reg(src);
      };
      s.a = operand(0);
      if (binary) s.b = operand(1);
      if (ir::is_ternary(node.op)) s.c = operand(2);
      has_imm = has_imm || imm_used;
      step_of[id] = static_cast<int>(steps.size());
      steps.push_back(s);
    }
    if (steps.size() == 1 && !has_imm) continue;  // a lone op stays primitive
    const size_t regs = inputs.size() + steps.size();
    if (regs > static_cast<size_t>(std::numeric_limits<int16_t>::max())) continue;

    Node fused;
    fused.op = Op::FusedElementwise;
    fused.in = inputs;
    fused.shape = g.nodes[root].shape;
    fused.regs = static_cast<int16_t>(regs);
    const int first_temp = static_cast<int>(inputs.size());
    auto reg = [&](int r) -> int16_t {
      if (r == kImm) return -1;
      return static_cast<int16_t>(r >= 0 ? r : first_temp + ~r);
    };
    for (size_t k = 0; k < steps.size(); ++k) {
      const Step& s = steps[k];
      Instr ins{s.op, static_cast<int16_t>(first_temp + static_cast<int>(k)), reg(s.a), -1, s.imm};
      if (ir::is_binary(s.op) || ir::is_ternary(s.op)) ins.b = reg(s.b);
      if (ir::is_ternary(s.op)) ins.c = reg(s.c);
      fused.prog.push_back(ins);
    }
    rw.replace(root, std::move(fused));
  }
  return rw.finish();
}

}  // namespace rungs::passes
