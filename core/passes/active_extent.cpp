// SPDX-License-Identifier: Apache-2.0
#include "core/passes/active_extent.hpp"

#include <algorithm>

namespace rungs::passes {

using ir::Op;

namespace {

// f(0) == 0 for these, so a value that is zero in padded rows stays zero.
bool keeps_zero(Op op) {
  switch (op) {
    case Op::Relu:
    case Op::Gelu:
    case Op::GeluTanh:
    case Op::Silu:
    case Op::Tanh:
    case Op::Sqrt:
    case Op::Neg:
    case Op::Abs:
    case Op::Erf:
    case Op::Sin: return true;
    default: return false;
  }
}

bool act_keeps_zero(Activation a) {
  return a == Activation::None || a == Activation::Relu || a == Activation::Gelu || a == Activation::GeluTanh ||
         a == Activation::Silu || a == Activation::Tanh;
}

// Zero-ness of a binary op's result from its operands'.
bool binary_zero(Op op, bool za, bool zb) {
  switch (op) {
    case Op::Mul: return za || zb;
    case Op::Div: return za;
    case Op::Add:
    case Op::Sub:
    case Op::Less:  // 0 < 0 is false
    case Op::Greater: return za && zb;
    default: return false;
  }
}

struct Analysis {
  const ir::GraphImpl& g;
  int64_t extent;
  std::vector<int> axis;
  std::vector<bool> zero;
  std::string reason;
  std::string differs;  // the first node where a padded run would differ from the exact one

  void note_differs(uint32_t id, const std::string& why) {
    if (differs.empty()) differs = ir::node_to_text(g, id) + ": " + why;
  }

  bool refuse(uint32_t id, const std::string& why) {
    if (reason.empty()) reason = ir::node_to_text(g, id) + ": " + why;
    return false;
  }

  // Position of input axis `a` (of a tensor of rank r) in a broadcast output of rank R.
  static int shift(int a, size_t r, size_t R) { return a < 0 ? -1 : a + static_cast<int>(R - r); }

  // Elementwise-style node: every input's row axis must land on the same output axis, and inputs
  // without rows must not span the extent on that axis.
  bool broadcast_rows(uint32_t id) {
    const ir::Node& n = g.nodes[id];
    int out = -1;
    for (uint32_t src : n.in) {
      int a = shift(axis[src], g.nodes[src].shape.size(), n.shape.size());
      if (a < 0) continue;
      if (out >= 0 && out != a) return refuse(id, "inputs carry rows on different axes");
      out = a;
    }
    if (out >= 0)
      for (uint32_t src : n.in) {
        if (axis[src] >= 0) continue;
        const Shape& s = g.nodes[src].shape;
        int a = out - static_cast<int>(n.shape.size() - s.size());
        if (a >= 0 && s[a] != 1) return refuse(id, "an input without rows spans the row axis");
      }
    axis[id] = out;
    return true;
  }

  bool node(uint32_t id) {
    const ir::Node& n = g.nodes[id];
    auto in_axis = [&](size_t k) { return axis[n.in[k]]; };
    auto in_zero = [&](size_t k) { return static_cast<bool>(zero[n.in[k]]); };
    switch (n.op) {
      case Op::Input: {
        // Rows are the outermost non-1 axis, as pad_rows lays them out.
        int a = -1;
        for (size_t i = 0; i < n.shape.size(); ++i)
          if (n.shape[i] != 1) {
            a = static_cast<int>(i);
            break;
          }
        if (a >= 0 && n.shape[a] == extent) {
          axis[id] = a;
          zero[id] = true;
        }
        for (size_t i = a < 0 ? 0 : a + 1; i < n.shape.size(); ++i)
          if (n.shape[i] == extent && axis[id] < 0)
            return refuse(id, "the input spans the extent on an inner axis, but rows are padded on the outer one");
        return true;
      }
      case Op::Param:
      case Op::Constant: return true;
      case Op::MatMul:
      case Op::FusedMatMul: {
        const size_t ra = g.nodes[n.in[0]].shape.size(), rb = g.nodes[n.in[1]].shape.size(), R = n.shape.size();
        int a = in_axis(0), b = in_axis(1);
        if (a == static_cast<int>(ra) - 1) return refuse(id, "rows on the contracted axis of a");
        if (b == static_cast<int>(rb) - 2) return refuse(id, "rows on the contracted axis of b");
        if (b == static_cast<int>(rb) - 1) return refuse(id, "rows on the N axis of b");
        int oa = shift(a, ra, R), ob = shift(b, rb, R);
        if (oa >= 0 && ob >= 0 && oa != ob) return refuse(id, "operands carry rows on different axes");
        int out = oa >= 0 ? oa : ob;
        if (out < 0) {
          if (std::find(n.shape.begin(), n.shape.end(), extent) != n.shape.end() &&
              (n.epi.residual && axis[n.in.back()] >= 0))
            return refuse(id, "residual carries rows but the product does not");
          return true;
        }
        bool z = oa >= 0 && in_zero(0);
        if (n.op == Op::FusedMatMul) {
          const size_t parts = static_cast<size_t>(n.epi.b_parts);
          for (size_t k = 2; k <= parts; ++k)  // the other parts of B, weights like the first
            if (in_axis(k) >= 0) return refuse(id, "a part of b carries rows");
          if (n.epi.bias) {
            for (size_t k = 1 + parts; k <= 2 * parts; ++k)
              if (in_axis(k) >= 0) return refuse(id, "bias carries rows");
            z = false;
          }
          z = z && act_keeps_zero(n.epi.act);
          if (n.epi.residual) {
            uint32_t r = n.in.back();
            if (shift(axis[r], g.nodes[r].shape.size(), R) != out) return refuse(id, "residual rows differ");
            z = z && zero[r];
          }
        }
        axis[id] = out;
        zero[id] = z;
        return true;
      }
      case Op::FusedElementwise: {
        if (!broadcast_rows(id)) return false;
        std::vector<bool> rz(static_cast<size_t>(n.regs), false);
        for (size_t k = 0; k < n.in.size(); ++k) rz[k] = zero[n.in[k]];
        for (const ir::Instr& ins : n.prog) {
          bool za = ins.a >= 0 ? rz[ins.a] : ins.imm == 0.f;
          bool zb = ins.b >= 0 ? rz[ins.b] : ins.imm == 0.f;
          bool zc = ins.c >= 0 ? rz[ins.c] : ins.imm == 0.f;
          rz[ins.dst] = ir::is_ternary(ins.op)  ? zb && zc  // where: zero whichever it picks
                        : ir::is_binary(ins.op) ? binary_zero(ins.op, za, zb)
                                                : (za && keeps_zero(ins.op));
        }
        zero[id] = axis[id] >= 0 && rz[n.prog.back().dst];
        return true;
      }
      case Op::Softmax:
        if (in_axis(0) >= 0 && in_axis(0) == n.ints[0]) return refuse(id, "softmax across rows");
        axis[id] = in_axis(0);
        return true;
      case Op::LayerNorm:
      case Op::RmsNorm:
      case Op::FusedAddNorm: {
        const int last = static_cast<int>(n.shape.size()) - 1;
        size_t data_inputs = n.op == Op::FusedAddNorm ? 2 : 1;
        for (size_t k = 0; k < data_inputs; ++k)
          if (in_axis(k) == last) return refuse(id, "normalizing across rows");
        for (size_t k = data_inputs; k < n.in.size(); ++k)
          if (in_axis(k) >= 0) return refuse(id, "a norm gain carries rows");
        if (data_inputs == 2 && in_axis(0) != in_axis(1)) return refuse(id, "add operands carry rows differently");
        axis[id] = in_axis(0);
        Op norm = n.op == Op::FusedAddNorm ? n.norm : n.op;
        zero[id] = axis[id] >= 0 && norm == Op::RmsNorm &&
                   (data_inputs == 1 ? in_zero(0) : (in_zero(0) && in_zero(1)));
        return true;
      }
      case Op::ReduceSum:
      case Op::ReduceMean:
      case Op::ReduceMax: {
        int a = in_axis(0);
        if (a < 0) return true;
        bool reduced = std::find(n.ints.begin(), n.ints.end(), a) != n.ints.end();
        if (reduced) {
          // The kernel reduces over the runtime rows (a mean divides by their count): exact at r.
          // A padded run would reduce over the padding too, unless a sum's padded rows are zero.
          if (n.op != Op::ReduceSum) {
            note_differs(id, std::string(n.op == Op::ReduceMean ? "mean" : "max") + " over rows");
          } else if (!in_zero(0)) {
            // Its divisor, if any, may be a compiled constant (a sequence length folded from E).
            return refuse(id, "a sum over rows of a value that is not zero in padded rows");
          }
          return true;  // the result no longer has rows
        }
        int out = a;
        if (!n.keep_dims)
          out -= static_cast<int>(std::count_if(n.ints.begin(), n.ints.end(), [&](int64_t x) { return x < a; }));
        axis[id] = out;
        zero[id] = n.op == Op::ReduceSum && in_zero(0);
        return true;
      }
      case Op::Reshape: {
        int a = in_axis(0);
        if (a < 0) return true;
        const Shape& s = g.nodes[n.in[0]].shape;
        int64_t before = 1;
        for (int i = 0; i < a; ++i) before *= s[i];
        int64_t acc = 1;
        for (size_t i = 0; i < n.shape.size(); ++i) {
          if (acc == before && n.shape[i] == s[a]) {
            axis[id] = static_cast<int>(i);
            zero[id] = in_zero(0);
            return true;
          }
          acc *= n.shape[i];
        }
        return refuse(id, "the reshape splits or merges the row axis");
      }
      case Op::Transpose: {
        int a = in_axis(0);
        if (a < 0) return true;
        for (size_t i = 0; i < n.ints.size(); ++i)
          if (n.ints[i] == a) axis[id] = static_cast<int>(i);
        zero[id] = in_zero(0);
        return true;
      }
      case Op::Slice: {
        const int a = in_axis(0), along = static_cast<int>(n.ints[0]);
        if (a >= 0 && a == along) {
          // Leading rows every run has (r >= 1): the first token, for a pooler or a classifier.
          if (n.ints[1] + n.ints[2] > 1) return refuse(id, "slicing across rows past the first");
          zero[id] = false;
          return true;  // the result no longer has rows
        }
        // The first E rows of a table without rows (position embeddings): its first r rows are
        // the first r rows of the table, so the slice carries rows on its outermost non-1 axis.
        if (a < 0 && n.ints[1] == 0 && n.ints[2] == extent) {
          int outer = -1;
          for (size_t i = 0; i < n.shape.size() && outer < 0; ++i)
            if (n.shape[i] != 1) outer = static_cast<int>(i);
          if (outer != along) return refuse(id, "a slice of E rows that is not along its outermost axis");
          axis[id] = along;
          return true;
        }
        axis[id] = a;
        zero[id] = in_zero(0);
        return true;
      }
      case Op::Concat: {
        int a = in_axis(0);
        for (size_t k = 0; k < n.in.size(); ++k)
          if (in_axis(k) != a) return refuse(id, "concat inputs carry rows differently");
        if (a >= 0 && a == n.ints[0]) return refuse(id, "concatenating along rows");
        axis[id] = a;
        zero[id] = a >= 0 && std::all_of(n.in.begin(), n.in.end(), [&](uint32_t s) { return zero[s]; });
        return true;
      }
      case Op::Gather:
        if (in_axis(0) >= 0) return refuse(id, "the gather table carries rows");
        axis[id] = in_axis(1);
        return true;
      case Op::Attention: {
        int q = in_axis(0), k = in_axis(1), v = in_axis(2);
        if (k != v) return refuse(id, "keys and values carry rows differently");
        if (q == 2 || k == 2) return refuse(id, "rows on the feature axis");
        if (q == 0 || k == 0) {  // rows on the batch axis: every batch row is independent
          if ((q >= 0 && q != 0) || (k >= 0 && k != 0) || (n.has_mask && in_axis(3) != 0 && in_axis(3) >= 0))
            return refuse(id, "batch rows mixed with sequence rows");
          axis[id] = 0;
          return true;
        }
        if (k == 1) {
          // The kernel attends only the runtime keys: exact at r. A padded run attends the padded
          // keys too unless a key mask drops them or the attention is causal self-attention.
          if (n.has_mask && in_axis(3) != 1) return refuse(id, "the keys carry rows but the key mask does not");
          bool masked = n.has_mask && zero[n.in[3]];
          bool causal_self = n.causal && q == 1 && g.nodes[n.in[0]].shape[1] == g.nodes[n.in[1]].shape[1];
          if (!masked && !causal_self)
            note_differs(id, "attention over the rows without a key mask that is zero in padded rows");
        } else if (n.has_mask && in_axis(3) >= 0) {
          return refuse(id, "the key mask carries rows but the keys do not");
        }
        axis[id] = q;
        return true;
      }
      default:
        if (ir::is_elementwise(n.op)) {
          if (!broadcast_rows(id)) return false;
          if (axis[id] >= 0)
            zero[id] = ir::is_ternary(n.op)  ? in_zero(1) && in_zero(2)  // where: zero whichever it picks
                       : ir::is_binary(n.op) ? binary_zero(n.op, in_zero(0), in_zero(1))
                                             : (in_zero(0) && keeps_zero(n.op));
          return true;
        }
        return refuse(id, "op not supported under active extent");
    }
  }
};

}  // namespace

ActiveRows analyze_active_rows(const ir::GraphImpl& g, int64_t extent) {
  ActiveRows r;
  r.extent = extent;
  Analysis a{g, extent, std::vector<int>(g.nodes.size(), -1), std::vector<bool>(g.nodes.size(), false), {}, {}};
  bool any_rows = false;
  for (uint32_t i = 0; i < g.nodes.size(); ++i) {
    if (!a.node(i)) {
      r.reason = a.reason;
      return r;
    }
    any_rows = any_rows || (g.nodes[i].op == Op::Input && a.axis[i] >= 0);
  }
  if (!any_rows) {
    r.reason = "no input has the extent " + std::to_string(extent) + " as its outer axis";
    return r;
  }
  // A node whose shape spans the extent but carries no rows would be computed at full size from
  // shrunken inputs: refuse rather than guess.
  for (uint32_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& n = g.nodes[i];
    if (a.axis[i] >= 0 || n.op == Op::Param || n.op == Op::Constant) continue;
    bool reads_rows = std::any_of(n.in.begin(), n.in.end(), [&](uint32_t s) { return a.axis[s] >= 0; });
    if (!reads_rows) continue;
    bool spans = std::find(n.shape.begin(), n.shape.end(), extent) != n.shape.end();
    bool reduces_rows = n.op == Op::ReduceSum || n.op == Op::ReduceMean || n.op == Op::ReduceMax ||
                        n.op == Op::Attention || (n.op == Op::Slice && a.axis[n.in[0]] == n.ints[0]);
    if (spans && !reduces_rows) {
      r.reason = ir::node_to_text(g, i) + ": reads rows but its own shape keeps the extent";
      return r;
    }
  }
  r.supported = true;
  r.differs_from_padding = std::move(a.differs);
  r.row_axis = std::move(a.axis);
  return r;
}

}  // namespace rungs::passes
