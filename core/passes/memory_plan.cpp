// SPDX-License-Identifier: Apache-2.0
#include "core/passes/memory_plan.hpp"

#include <algorithm>

namespace rungs::passes {

namespace {
constexpr int64_t kAlignFloats = 16;
int64_t round_up(int64_t x) { return (x + kAlignFloats - 1) / kAlignFloats * kAlignFloats; }

bool in_arena(const ir::Node& n) { return n.op != ir::Op::Param && n.op != ir::Op::Constant; }

// The roots whose buffers only row segments touch, each thread its own rows: written by a kernel
// of a segment, row-carrying, read only by kernels of segments that slice it by rows (a row
// reduction ending a segment too), and no graph output or input.
std::vector<uint8_t> regional_roots(const ir::GraphImpl& g, const RowSegments& rows, const std::vector<uint32_t>& root) {
  const uint32_t n = static_cast<uint32_t>(g.nodes.size());
  std::vector<uint8_t> regional(n, 0);
  if (rows.segments.empty() || rows.row_axis.size() != n) return regional;
  std::vector<uint8_t> in_segment(n, 0), reads_rows(n, 0);  // reads_rows: slices its inputs by rows
  for (const RowSegment& s : rows.segments) {
    for (uint32_t i = s.first; i <= s.last; ++i) {
      in_segment[i] = 1;
      reads_rows[i] = rows.row_axis[i] >= 0 || (s.reduces && i == s.last);  // a row reduction: no rows out
    }
  }
  for (uint32_t i = 0; i < n; ++i) {
    const ir::Op op = g.nodes[i].op;
    regional[i] = in_segment[i] && rows.row_axis[i] >= 0 && root[i] == i && op != ir::Op::Input &&
                  op != ir::Op::Param && op != ir::Op::Constant;
  }
  for (uint32_t i = 0; i < n; ++i) {
    if (g.nodes[i].op == ir::Op::Reshape) continue;  // an alias reads nothing; its readers are checked
    for (uint32_t src : g.nodes[i].in)
      if (!reads_rows[i] || rows.row_axis[src] < 0) regional[root[src]] = 0;
  }
  for (const auto& o : g.outputs) regional[root[o.second]] = 0;
  return regional;
}

MemoryPlan plan(const ir::GraphImpl& g, std::span<const RowSegment> segments, const RowSegments* rows) {
  const uint32_t n = static_cast<uint32_t>(g.nodes.size());
  MemoryPlan p;
  p.offset.assign(n, MemoryPlan::kNone);
  p.floats.assign(n, 0);
  p.root.resize(n);
  p.first_step.resize(n);
  p.last_step.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    const ir::Node& node = g.nodes[i];
    p.root[i] = (node.op == ir::Op::Reshape) ? p.root[node.in[0]] : i;
    // Inputs are all copied in before the first kernel runs: live from the start.
    p.first_step[i] = node.op == ir::Op::Input ? 0 : i;
    p.last_step[i] = p.first_step[i];
  }
  // Liveness is tracked on roots: an alias keeps its source alive.
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t src : g.nodes[i].in) p.last_step[p.root[src]] = std::max(p.last_step[p.root[src]], i);
  for (const auto& o : g.outputs) p.last_step[p.root[o.second]] = n;  // read after the last kernel
  if (rows) p.in_regions = regional_roots(g, *rows, p.root);
  for (const RowSegment& s : segments)
    for (uint32_t i = 0; i < n; ++i)
      if (p.root[i] == i && !p.regional(i) && p.first_step[i] <= s.last && p.last_step[i] >= s.first) {
        p.first_step[i] = std::min(p.first_step[i], s.first);
        p.last_step[i] = std::max(p.last_step[i], s.last);
      }

  struct Live {
    int64_t begin, end;
    uint32_t last;
  };
  std::vector<Live> arena_live, region_live;  // blocks in use, sorted by offset
  // Inputs are live from the start, so they are placed first: an input declared after compute
  // nodes must not land on a buffer those nodes still use.
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < n; ++i)
    if (g.nodes[i].op == ir::Op::Input) order.push_back(i);
  for (uint32_t i = 0; i < n; ++i)
    if (g.nodes[i].op != ir::Op::Input) order.push_back(i);
  for (uint32_t i : order) {
    const ir::Node& node = g.nodes[i];
    if (p.root[i] != i || !in_arena(node)) continue;
    const int64_t size = round_up(shape_numel(node.shape));
    p.floats[i] = size;
    p.unshared_floats += size;
    const bool regional = p.regional(i);
    std::vector<Live>& live = regional ? region_live : arena_live;
    int64_t& extent = regional ? p.region_floats : p.arena_floats;
    // Blocks whose last reader is before this node's definition are free again.
    const uint32_t now = p.first_step[i];
    live.erase(std::remove_if(live.begin(), live.end(), [&](const Live& l) { return l.last < now; }), live.end());
    // First fit among the gaps.
    int64_t at = 0;
    for (const Live& l : live) {
      if (l.begin - at >= size) break;
      at = std::max(at, l.end);
    }
    p.offset[i] = at;
    live.push_back({at, at + size, p.last_step[i]});
    std::sort(live.begin(), live.end(), [](const Live& a, const Live& b) { return a.begin < b.begin; });
    extent = std::max(extent, at + size);
  }
  for (uint32_t i = 0; i < n; ++i) p.offset[i] = p.offset[p.root[i]];
  return p;
}

}  // namespace

MemoryPlan plan_memory(const ir::GraphImpl& g, std::span<const RowSegment> segments) { return plan(g, segments, nullptr); }

MemoryPlan plan_memory(const ir::GraphImpl& g, const RowSegments& rows) { return plan(g, rows.segments, &rows); }

bool plan_is_valid(const ir::GraphImpl& g, const MemoryPlan& p) {
  const uint32_t n = static_cast<uint32_t>(g.nodes.size());
  for (uint32_t a = 0; a < n; ++a) {
    if (p.root[a] != a || p.floats[a] == 0) continue;
    if (p.offset[a] < 0 || p.offset[a] + p.floats[a] > (p.regional(a) ? p.region_floats : p.arena_floats)) return false;
    if (p.floats[a] < shape_numel(g.nodes[a].shape)) return false;
    for (uint32_t b = a + 1; b < n; ++b) {
      if (p.root[b] != b || p.floats[b] == 0) continue;
      if (p.regional(a) != p.regional(b)) continue;  // the arena and the regions are apart
      bool time_overlap = p.first_step[a] <= p.last_step[b] && p.first_step[b] <= p.last_step[a];
      bool space_overlap = p.offset[a] < p.offset[b] + p.floats[b] && p.offset[b] < p.offset[a] + p.floats[a];
      if (time_overlap && space_overlap) return false;
    }
  }
  return true;
}

}  // namespace rungs::passes
