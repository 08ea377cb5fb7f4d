// SPDX-License-Identifier: Apache-2.0
#include "core/passes/scalar_eval.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/ops_scalar.hpp"
#include "core/passes/rewrite.hpp"

namespace rungs::passes {

using ir::Op;

std::optional<double> eval_op(Op op, const std::vector<double>& v) {
  const double a = v.empty() ? 0.0 : v[0];
  const double b = v.size() > 1 ? v[1] : 0.0;
  const double c = v.size() > 2 ? v[2] : 0.0;
  if (op == Op::Reshape) return a;
  return ops::scalar::eval<double>(op, a, b, c);  // the reference's meaning, in double
}

std::optional<double> eval_tree(const ir::GraphImpl& g, const std::vector<uint32_t>& tree, uint32_t leaf,
                                double value) {
  std::map<uint32_t, double> val;
  std::vector<double> args;
  for (uint32_t u : tree) {
    args.clear();
    for (uint32_t src : g.nodes[u].in) {
      if (src == leaf) {
        args.push_back(value);
      } else if (auto c = scalar_constant(g, src)) {
        args.push_back(*c);
      } else {
        auto it = val.find(src);
        if (it == val.end()) return std::nullopt;
        args.push_back(it->second);
      }
    }
    auto r = eval_op(g.nodes[u].op, args);
    if (!r) return std::nullopt;
    val[u] = *r;
  }
  if (tree.empty()) return value;
  return val.at(tree.back());
}

}  // namespace rungs::passes
