// SPDX-License-Identifier: Apache-2.0
#include "core/passes/fuse_qkv.hpp"

#include <array>
#include <optional>
#include <utility>

#include "core/passes/rewrite.hpp"

namespace rungs::passes {

using ir::Epilogue;
using ir::Node;
using ir::Op;

namespace {

Epilogue epilogue_of(const Node& n) { return n.op == Op::FusedMatMul ? n.epi : Epilogue{}; }

// A projection the grouped product can take as a part: A times a rank-2 weight with at most a
// bias and an activation, read only by `attention`.
bool is_projection(const Rewriter& rw, uint32_t id, uint32_t attention) {
  const Node& n = rw.node(id);
  if (n.op != Op::MatMul && n.op != Op::FusedMatMul) return false;
  const Epilogue e = epilogue_of(n);
  if (e.residual || e.b_parts != 1) return false;
  const Node& b = rw.node(n.in[1]);
  if ((b.op != Op::Param && b.op != Op::Constant) || b.shape.size() != 2) return false;
  return rw.node(n.in[0]).shape.size() == 3 && rw.sole_consumer(id) == attention;
}

bool same_kind(const Rewriter& rw, uint32_t x, uint32_t y) {
  const Node &a = rw.node(x), &b = rw.node(y);
  const Epilogue ea = epilogue_of(a), eb = epilogue_of(b);
  return a.in[0] == b.in[0] && rw.node(a.in[1]).op == rw.node(b.in[1]).op && ea.bias == eb.bias &&
         ea.act == eb.act && ea.b_transposed == eb.b_transposed;
}

// q, k and v as slices of one [B, S, 2 w + wv] tensor along its last axis, in that order and
// covering it (an exported projection of the three at once, then Split), each read only by
// `attention`: the tensor and w.
std::optional<std::pair<uint32_t, int64_t>> split_projection(const Rewriter& rw, const std::array<uint32_t, 3>& qkv,
                                                             uint32_t attention) {
  const Node& q = rw.node(qkv[0]);
  if (q.op != Op::Slice) return std::nullopt;
  const uint32_t src = q.in[0];
  const Shape& shape = rw.node(src).shape;
  if (shape.size() != 3) return std::nullopt;
  const int64_t last = 2, w = q.ints[2];
  int64_t start = 0;
  for (uint32_t id : qkv) {
    const Node& s = rw.node(id);
    if (s.op != Op::Slice || s.in[0] != src || rw.sole_consumer(id) != attention) return std::nullopt;
    const int64_t axis = s.ints[0] < 0 ? s.ints[0] + 3 : s.ints[0];
    if (axis != last || s.ints[1] != start) return std::nullopt;
    if (id != qkv[2] && s.ints[2] != w) return std::nullopt;
    start += s.ints[2];
  }
  if (start != shape[last]) return std::nullopt;
  return std::make_pair(src, w);
}

}  // namespace

bool fuse_qkv(ir::GraphImpl& g) {
  Rewriter rw(g);
  const uint32_t count = static_cast<uint32_t>(g.nodes.size());
  for (uint32_t id = 0; id < count; ++id) {
    const Node& att = g.nodes[id];
    if (att.op != Op::Attention || !att.ints.empty()) continue;
    const std::array<uint32_t, 3> qkv = {att.in[0], att.in[1], att.in[2]};
    if (qkv[0] == qkv[1] || qkv[0] == qkv[2] || qkv[1] == qkv[2]) continue;
    if (auto split = split_projection(rw, qkv, id)) {  // already one product: drop the slices' copies
      Node packed = att;
      packed.ints = {split->second};
      packed.in[0] = packed.in[1] = packed.in[2] = split->first;
      rw.replace(id, std::move(packed));
      continue;
    }
    bool ok = true;
    for (uint32_t p : qkv) ok = ok && is_projection(rw, p, id) && same_kind(rw, p, qkv[0]);
    if (!ok) continue;

    const Node& q = g.nodes[qkv[0]];
    Node prod;
    prod.op = Op::FusedMatMul;
    prod.epi = epilogue_of(q);
    prod.epi.b_parts = 3;
    prod.shape = q.shape;
    prod.shape.back() = 0;
    prod.in = {q.in[0]};
    for (uint32_t p : qkv) prod.in.push_back(g.nodes[p].in[1]);
    if (prod.epi.bias)
      for (uint32_t p : qkv) prod.in.push_back(g.nodes[p].in[2]);
    for (uint32_t p : qkv) prod.shape.back() += g.nodes[p].shape.back();

    Node packed = att;
    packed.ints = {q.shape.back()};
    const uint32_t grouped = rw.append(std::move(prod));
    packed.in[0] = packed.in[1] = packed.in[2] = grouped;
    rw.replace(id, std::move(packed));
  }
  return rw.finish();
}

}  // namespace rungs::passes
