// SPDX-License-Identifier: Apache-2.0
#include "core/compile/kernel_params.hpp"

#include "core/check.hpp"

namespace rungs::compile {

using ir::Op;

namespace {

backend::Source source_of(Op op) {
  switch (op) {
    case Op::Param: return backend::Source::Param;
    case Op::Constant: return backend::Source::Constant;
    default: return backend::Source::Activation;
  }
}

backend::ReduceKind reduce_kind(Op op) {
  switch (op) {
    case Op::ReduceSum: return backend::ReduceKind::Sum;
    case Op::ReduceMean: return backend::ReduceKind::Mean;
    default: return backend::ReduceKind::Max;
  }
}

int axis_at(const ir::Node& n, size_t i) {
  internal_check(n.ints.size() > i, "kernel_params: an axis missing from the node");
  return static_cast<int>(n.ints[i]);
}

}  // namespace

backend::KernelParams kernel_params(const ir::GraphImpl& g, uint32_t id, PrecisionPolicy policy, int threads) {
  const ir::Node& n = g.at(id);
  backend::KernelParams p;
  p.op = n.op;
  p.out = backend::Dims::of(n.shape);
  p.policy = policy;
  p.threads = threads;
  p.inputs.reserve(n.in.size());
  for (uint32_t src : n.in) {
    const ir::Node& s = g.at(src);
    backend::InputParams in;
    in.dims = backend::Dims::of(s.shape);
    in.source = source_of(s.op);
    if (s.op == Op::Constant) in.data = s.data;
    p.inputs.push_back(std::move(in));
  }
  switch (n.op) {
    case Op::FusedMatMul:
      p.epilogue = n.epi;
      break;
    case Op::FusedElementwise:
      p.elementwise.code = n.prog;
      p.elementwise.regs = n.regs;
      break;
    case Op::Softmax: {
      const int rank = static_cast<int>(n.shape.size());
      const int axis = n.ints.empty() ? -1 : axis_at(n, 0);
      p.softmax.axis = axis < 0 ? axis + rank : axis;
      break;
    }
    case Op::LayerNorm:
    case Op::RmsNorm:
    case Op::FusedAddNorm: {
      p.norm.add = n.op == Op::FusedAddNorm;
      p.norm.rms = (p.norm.add ? n.norm : n.op) == Op::RmsNorm;
      p.norm.has_beta = !p.norm.rms;
      p.norm.eps = n.eps;
      break;
    }
    case Op::ReduceSum:
    case Op::ReduceMean:
    case Op::ReduceMax:
      p.reduce.kind = reduce_kind(n.op);
      p.reduce.axes = n.ints;
      break;
    case Op::Attention:
      p.attention.heads = n.heads;
      p.attention.causal = n.causal;
      p.attention.has_mask = n.has_mask;
      p.attention.scale = n.scale;
      p.attention.packed_qk = n.ints.empty() ? 0 : n.ints[0];
      break;
    case Op::Transpose:
      p.transpose.perm = n.ints;
      break;
    case Op::Slice:
      internal_check(n.ints.size() == 3, "kernel_params: slice without {axis, start, length}");
      p.slice.axis = axis_at(n, 0);
      p.slice.start = n.ints[1];
      p.slice.length = n.ints[2];
      break;
    case Op::Concat:
      p.concat.axis = axis_at(n, 0);
      break;
    default:
      break;  // the op, its dims and its inputs say everything
  }
  return p;
}

}  // namespace rungs::compile
