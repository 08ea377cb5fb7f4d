// SPDX-License-Identifier: Apache-2.0
#include "core/ir/graph_impl.hpp"

#include <algorithm>
#include <sstream>

namespace rungs::ir {

namespace {
std::string ints_to_string(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(v[i]);
  }
  return s + "]";
}

std::string reg(int16_t r, float imm) {
  if (r < 0) {
    std::ostringstream os;
    os << imm;
    return os.str();
  }
  return "r" + std::to_string(r);
}
}  // namespace

std::string node_to_text(const GraphImpl& g, uint32_t id) {
  const Node& n = g.nodes[id];
  std::ostringstream os;
  os << "%" << id << " = " << op_name(n.op);
  if (n.op == Op::FusedAddNorm) os << "." << op_name(n.norm);
  os << "(";
  bool first = true;
  auto sep = [&] {
    if (!first) os << ", ";
    first = false;
  };
  if (!n.name.empty()) {
    sep();
    os << '"' << n.name << '"';
  }
  for (uint32_t i : n.in) {
    sep();
    os << "%" << i;
  }
  switch (n.op) {
    case Op::Constant:
      sep();
      os << n.data->size() << " values";
      break;
    case Op::Softmax:
    case Op::Concat:
      sep();
      os << "axis=" << n.ints.at(0);
      break;
    case Op::ReduceSum:
    case Op::ReduceMean:
    case Op::ReduceMax:
      sep();
      os << "axes=" << ints_to_string(n.ints) << (n.keep_dims ? ", keep_dims" : "");
      break;
    case Op::Transpose:
      sep();
      os << "perm=" << ints_to_string(n.ints);
      break;
    case Op::Slice:
      sep();
      os << "axis=" << n.ints[0] << ", start=" << n.ints[1] << ", length=" << n.ints[2];
      break;
    case Op::LayerNorm:
    case Op::RmsNorm:
    case Op::FusedAddNorm:
      sep();
      os << "eps=" << n.eps;
      break;
    case Op::Attention:
      sep();
      os << "heads=" << n.heads << (n.causal ? ", causal" : "") << (n.has_mask ? ", masked" : "");
      if (n.scale) os << ", scale=" << *n.scale;
      if (!n.ints.empty()) os << ", packed q|k|v (q and k " << n.ints[0] << " wide)";
      break;
    case Op::FusedMatMul:
      sep();
      os << "epilogue=" << (n.epi.bias ? "bias" : "") << (n.epi.bias ? "+" : "") << to_string(n.epi.act)
         << (n.epi.residual ? "+residual" : "") << (n.epi.b_transposed ? ", b transposed" : "");
      if (n.epi.b_parts > 1) os << ", b in " << n.epi.b_parts << " parts";
      break;
    case Op::FusedElementwise: {
      sep();
      os << "{";
      for (size_t i = 0; i < n.prog.size(); ++i) {
        const Instr& in = n.prog[i];
        if (i) os << "; ";
        os << "r" << in.dst << "=" << op_name(in.op) << "(" << reg(in.a, in.imm);
        if (is_binary(in.op) || is_ternary(in.op)) os << ", " << reg(in.b, in.imm);
        if (is_ternary(in.op)) os << ", " << reg(in.c, in.imm);
        os << ")";
      }
      os << "}";
      break;
    }
    default:
      break;
  }
  os << ") : " << shape_to_string(n.shape);
  return os.str();
}

std::string to_text(const GraphImpl& g) {
  std::string s;
  for (uint32_t i = 0; i < g.nodes.size(); ++i) s += node_to_text(g, i) + "\n";
  for (const auto& [name, id] : g.outputs) s += "output \"" + name + "\" = %" + std::to_string(id) + "\n";
  return s;
}

std::vector<uint32_t> use_counts(const GraphImpl& g) {
  std::vector<uint32_t> uses(g.nodes.size(), 0);
  for (const Node& n : g.nodes)
    for (uint32_t i : n.in) ++uses[i];
  for (const auto& o : g.outputs) ++uses[o.second];
  return uses;
}

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r, 1);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da == db || db == 1)
      out[i] = da;
    else if (da == 1)
      out[i] = db;
    else
      return std::nullopt;
  }
  return out;
}

}  // namespace rungs::ir
