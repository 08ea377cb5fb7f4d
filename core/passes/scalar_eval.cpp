// SPDX-License-Identifier: Apache-2.0
#include "core/passes/scalar_eval.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/passes/rewrite.hpp"

namespace rungs::passes {

using ir::Op;

std::optional<double> eval_op(Op op, const std::vector<double>& v) {
  const double a = v.empty() ? 0.0 : v[0];
  const double b = v.size() > 1 ? v[1] : 0.0;
  const double c = v.size() > 2 ? v[2] : 0.0;
  switch (op) {
    case Op::Add: return a + b;
    case Op::Sub: return a - b;
    case Op::Mul: return a * b;
    case Op::Div: return a / b;
    case Op::Maximum: return std::max(a, b);
    case Op::Minimum: return std::min(a, b);
    case Op::Relu: return a > 0 ? a : 0.0;
    case Op::Neg: return -a;
    case Op::Abs: return std::fabs(a);
    case Op::Exp: return std::exp(a);
    case Op::Log: return std::log(a);
    case Op::Sqrt: return std::sqrt(a);
    case Op::Rsqrt: return 1.0 / std::sqrt(a);
    case Op::Tanh: return std::tanh(a);
    case Op::Sigmoid: return 1.0 / (1.0 + std::exp(-a));
    case Op::Pow: return std::pow(a, b);
    case Op::Equal: return a == b ? 1.0 : 0.0;
    case Op::Less: return a < b ? 1.0 : 0.0;
    case Op::Greater: return a > b ? 1.0 : 0.0;
    case Op::LessEqual: return a <= b ? 1.0 : 0.0;
    case Op::GreaterEqual: return a >= b ? 1.0 : 0.0;
    case Op::Erf: return std::erf(a);
    case Op::Sin: return std::sin(a);
    case Op::Cos: return std::cos(a);
    case Op::LogicalNot: return a == 0 ? 1.0 : 0.0;
    case Op::Where: return a != 0 ? b : c;
    case Op::Reshape: return a;
    default: return std::nullopt;
  }
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
