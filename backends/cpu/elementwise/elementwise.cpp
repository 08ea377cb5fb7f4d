// SPDX-License-Identifier: Apache-2.0
// Dispatch, program building and broadcast planning for the elementwise kernel (no ISA flags).
#include "backends/cpu/elementwise/elementwise.hpp"

#include "backends/cpu/rows/arch.hpp"
#include "core/check.hpp"

namespace rungs::backend::cpu {

using ops::Op;

int elementwise_arity(Op op) { return ops::elementwise_operands(op); }

Program program_of(const KernelParams& params) {
  Program p;
  p.inputs = static_cast<int>(params.inputs.size());
  if (params.op == Op::FusedElementwise) {
    p.code = params.elementwise.code;
    p.regs = params.elementwise.regs;
    for (const auto& ins : p.code) p.regs = std::max<int>(p.regs, ins.dst + 1);
    return p;
  }
  const int arity = elementwise_arity(params.op);
  const auto out = static_cast<int16_t>(p.inputs);
  p.code.push_back({params.op, out, 0, static_cast<int16_t>(arity >= 2 ? 1 : 0), 0.f,
                    static_cast<int16_t>(arity == 3 ? 2 : -1)});
  p.regs = p.inputs + 1;
  return p;
}

void plan_broadcast(std::span<const Dims> inputs, const Dims& out, BroadcastPlan& plan) {
  const size_t n_in = inputs.size();
  const int rank = out.rank;
  // Per axis of the output that is not 1: size and each input's element stride along it. Axes in
  // fixed arrays, per input in the thread's vectors (a kernel plans on every run, on every thread
  // of a row segment at once: no heap call, see thread_lines in line_buffer.hpp).
  using Axes = std::array<int64_t, ops::kMaxRank>;
  Axes sizes{};
  int n_sizes = 0;
  thread_local std::vector<Axes> strides, full, m_strides;
  strides.resize(n_in);
  full.resize(n_in);
  m_strides.resize(n_in);
  for (size_t i = 0; i < n_in; ++i) {
    const Dims& d = inputs[i];
    int64_t s = 1;
    for (int k = rank - 1; k >= 0; --k) {
      const int ik = k - (rank - d.rank);
      const int64_t dim = ik >= 0 ? d[ik] : 1;
      full[i][k] = dim == 1 ? 0 : s;
      s *= dim;
    }
  }
  for (int k = 0; k < rank; ++k) {
    if (out[k] == 1) continue;
    for (size_t i = 0; i < n_in; ++i) strides[i][n_sizes] = full[i][k];
    sizes[n_sizes++] = out[k];
  }
  // Merge from the innermost axis outwards.
  Axes m_sizes{};
  int n_merged = 0;
  for (int k = n_sizes - 1; k >= 0; --k) {
    bool merge = n_merged > 0;
    for (size_t i = 0; merge && i < n_in; ++i)
      merge = strides[i][k] == m_strides[i][n_merged - 1] * m_sizes[n_merged - 1];
    if (merge) {
      m_sizes[n_merged - 1] *= sizes[k];
    } else {
      for (size_t i = 0; i < n_in; ++i) m_strides[i][n_merged] = strides[i][k];
      m_sizes[n_merged++] = sizes[k];
    }
  }
  // m_* are innermost first.
  plan.outer_rank = 0;
  plan.rows = plan.inner = 1;
  plan.in_stride.assign(n_in, {});
  plan.in_contiguous.assign(n_in, 0);
  if (n_merged == 0) return;  // a single value
  plan.inner = m_sizes[0];
  for (size_t i = 0; i < n_in; ++i) plan.in_contiguous[i] = m_strides[i][0] != 0;
  plan.outer_rank = n_merged - 1;
  for (int a = 0; a < plan.outer_rank; ++a) {
    const auto src = static_cast<size_t>(n_merged - 1 - a);  // outermost first
    plan.outer[a] = m_sizes[src];
    plan.rows *= m_sizes[src];
    for (size_t i = 0; i < n_in; ++i) plan.in_stride[i][a] = m_strides[i][src];
  }
}

void RowCursor::seek(int64_t row) {
  row_ = row;
  for (int a = plan_.outer_rank - 1; a >= 0; --a) {
    idx_[a] = row % plan_.outer[a];
    row /= plan_.outer[a];
  }
  for (size_t i = 0; i < off_.size(); ++i) {
    int64_t o = 0;
    for (int a = 0; a < plan_.outer_rank; ++a) o += idx_[a] * plan_.in_stride[i][a];
    off_[i] = o;
  }
}

void RowCursor::next() {
  ++row_;
  for (int a = plan_.outer_rank - 1; a >= 0; --a) {
    ++idx_[a];
    for (size_t i = 0; i < off_.size(); ++i) off_[i] += plan_.in_stride[i][a];
    if (idx_[a] < plan_.outer[a]) return;
    for (size_t i = 0; i < off_.size(); ++i) off_[i] -= plan_.in_stride[i][a] * plan_.outer[a];
    idx_[a] = 0;
  }
}

std::unique_ptr<Kernel> make_elementwise_kernel(const KernelParams& params, Isa isa) {
  if (params.op != Op::FusedElementwise && elementwise_arity(params.op) == 0) return nullptr;
  return dispatch_isa(isa, [&]<class A>() { return make_elementwise_for<A>(params); });
}

}  // namespace rungs::backend::cpu
