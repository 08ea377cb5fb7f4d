// SPDX-License-Identifier: Apache-2.0
#include "core/passes/verify.hpp"

#include "core/check.hpp"

namespace rungs::passes {

using ir::Op;

namespace {
[[noreturn]] void broken(const ir::GraphImpl& g, uint32_t id, const std::string& what) {
  throw Error(ErrorCode::Internal, "internal error: IR verification failed at " + ir::node_to_text(g, id) + ": " + what);
}

size_t min_inputs(const ir::Node& n) {
  switch (n.op) {
    case Op::Input:
    case Op::Param:
    case Op::Constant: return 0;
    case Op::MatMul: return 2;
    case Op::FusedMatMul: return 1 + static_cast<size_t>(n.epi.b_parts) * (1 + n.epi.bias) + n.epi.residual;
    case Op::LayerNorm: return 3;
    case Op::RmsNorm: return 2;
    case Op::FusedAddNorm: return n.norm == Op::LayerNorm ? 4 : 3;
    case Op::Gather: return 2;
    case Op::Attention: return 3 + n.has_mask;
    case Op::FusedElementwise:
    case Op::Concat: return 1;
    case Op::Where: return 3;
    default: return ir::is_binary(n.op) ? 2 : 1;
  }
}
}  // namespace

void verify(const ir::GraphImpl& g) {
  for (uint32_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& n = g.nodes[i];
    for (uint32_t src : n.in)
      if (src >= i) broken(g, i, "input %" + std::to_string(src) + " does not come before the node");
    size_t want = min_inputs(n);
    bool exact = n.op != Op::FusedElementwise && n.op != Op::Concat;
    if (exact ? n.in.size() != want : n.in.size() < want)
      broken(g, i, "has " + std::to_string(n.in.size()) + " inputs, expected " + std::to_string(want));
    if (n.shape.size() > static_cast<size_t>(ir::kMaxRank)) broken(g, i, "rank too large");
    if (n.op == Op::FusedMatMul && n.epi.b_parts < 1) broken(g, i, "b in fewer than one part");
    if (n.op == Op::Attention && !n.ints.empty() &&
        (n.ints.size() != 1 || n.in[0] != n.in[1] || n.in[0] != n.in[2] || n.ints[0] < 1 ||
         2 * n.ints[0] >= g.nodes[n.in[0]].shape.back()))
      broken(g, i, "packed q|k|v: one tensor as q, k and v, wider than twice packed_qk");
    for (int64_t d : n.shape)
      if (d < 1) broken(g, i, "non-positive dimension");
    if (n.op == Op::Constant && (!n.data || static_cast<int64_t>(n.data->size()) != shape_numel(n.shape)))
      broken(g, i, "constant data does not match its shape");
    if (n.op == Op::FusedElementwise) {
      if (n.prog.empty()) broken(g, i, "empty program");
      for (const ir::Instr& ins : n.prog)
        if (ins.dst < static_cast<int16_t>(n.in.size()) || ins.dst >= n.regs || ins.a >= n.regs || ins.b >= n.regs ||
            ins.c >= n.regs || !ir::is_elementwise(ins.op) ||
            (ir::is_ternary(ins.op) && (ins.a < 0) + (ins.b < 0) + (ins.c < 0) > 1))
          broken(g, i, "bad program instruction");
      for (uint32_t src : n.in)
        if (!ir::broadcast_shapes(g.nodes[src].shape, n.shape) ||
            *ir::broadcast_shapes(g.nodes[src].shape, n.shape) != n.shape)
          broken(g, i, "an input does not broadcast to the output shape");
    }
  }
  for (const auto& o : g.outputs)
    if (o.second >= g.nodes.size()) throw Error(ErrorCode::Internal, "internal error: output '" + o.first + "' dangles");
}

}  // namespace rungs::passes
