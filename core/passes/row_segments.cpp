// SPDX-License-Identifier: Apache-2.0
#include "core/passes/row_segments.hpp"

#include <algorithm>

#include "core/passes/active_extent.hpp"

namespace rungs::passes {

using ir::Node;
using ir::Op;

namespace {

// The rows of the graph: the first input extent (outermost non-1 axis) under which every node is
// row-tracked (analyze_active_rows accepts the graph).
std::vector<int> rows_of(const ir::GraphImpl& g) {
  std::vector<int64_t> tried;
  for (const Node& n : g.nodes) {
    if (n.op != Op::Input) continue;
    auto outer = std::find_if(n.shape.begin(), n.shape.end(), [](int64_t d) { return d != 1; });
    if (outer == n.shape.end() || *outer < 2 || std::find(tried.begin(), tried.end(), *outer) != tried.end()) continue;
    tried.push_back(*outer);
    ActiveRows rows = analyze_active_rows(g, *outer);
    if (rows.supported) return std::move(rows.row_axis);
  }
  return {};
}

// Rows on `axis` with only 1s before it: a range of rows is one contiguous block.
bool outermost(const Node& n, int axis) {
  if (axis < 0) return false;
  for (int i = 0; i < axis; ++i)
    if (n.shape[i] != 1) return false;
  return true;
}

bool no_kernel(Op op) { return op == Op::Input || op == Op::Param || op == Op::Constant; }

// Row r of the node's output needs row r of its row-carrying inputs and nothing else of them.
bool row_local(const ir::GraphImpl& g, const std::vector<int>& axis, uint32_t id) {
  const Node& n = g.nodes[id];
  if (!outermost(n, axis[id])) return false;
  for (uint32_t src : n.in)
    if (axis[src] >= 0 && !outermost(g.nodes[src], axis[src])) return false;
  const int last = static_cast<int>(n.shape.size()) - 1;
  switch (n.op) {
    case Op::Reshape:  // an alias: its rows are its source's, laid out alike
      return true;
    case Op::LayerNorm:
    case Op::RmsNorm:
    case Op::FusedAddNorm:
      return axis[id] != last;
    case Op::Softmax:
      return axis[id] != n.ints[0] && axis[id] != last;
    case Op::MatMul:
    case Op::FusedMatMul:
      return axis[n.in[0]] >= 0 && axis[n.in[1]] < 0 && axis[id] != last;
    case Op::Gather:
      return axis[n.in[0]] < 0 && axis[n.in[1]] >= 0;
    case Op::FusedElementwise:
      return true;
    default:
      return ir::is_elementwise(n.op);
  }
}

// A sum, mean or max over exactly the rows of a row-carrying input whose rows are outermost and
// hold more than one value (the reduce kernel's column sums, which sum_row_blocks splits).
bool row_reduction(const ir::GraphImpl& g, const std::vector<int>& axis, uint32_t id) {
  const Node& n = g.nodes[id];
  if (n.op != Op::ReduceSum && n.op != Op::ReduceMean && n.op != Op::ReduceMax) return false;
  const Node& src = g.nodes[n.in[0]];
  const int a = axis[n.in[0]];
  if (axis[id] >= 0 || !outermost(src, a) || n.ints.size() != 1) return false;
  const int64_t rank = static_cast<int64_t>(src.shape.size());
  if ((n.ints[0] < 0 ? n.ints[0] + rank : n.ints[0]) != a) return false;
  int64_t inner = 1;
  for (size_t k = static_cast<size_t>(a) + 1; k < src.shape.size(); ++k) inner *= src.shape[k];
  return inner > 1;
}

}  // namespace

RowSegments find_row_segments(const ir::GraphImpl& g) {
  RowSegments r;
  r.row_axis = rows_of(g);
  if (r.row_axis.empty()) return r;
  const uint32_t n = static_cast<uint32_t>(g.nodes.size());
  RowSegment open;
  int kernels = 0;
  auto close = [&] {
    if (kernels >= 2) r.segments.push_back(open);
    kernels = 0;
    open.reduces = false;
  };
  for (uint32_t i = 0; i < n; ++i) {
    const Op op = g.nodes[i].op;
    if (no_kernel(op)) continue;
    if (kernels > 0 && row_reduction(g, r.row_axis, i)) {  // the segment's last node
      open.last = i;
      open.reduces = true;
      ++kernels;
      close();
      continue;
    }
    if (!row_local(g, r.row_axis, i)) {
      close();
      continue;
    }
    if (op == Op::Reshape) continue;  // neither starts nor ends a segment
    if (kernels == 0) open.first = i;
    open.last = i;
    ++kernels;
  }
  close();
  return r;
}

}  // namespace rungs::passes
