// SPDX-License-Identifier: Apache-2.0
#include "core/passes/constant_fold.hpp"

#include <memory>
#include <vector>

#include "backends/kernel.hpp"
#include "core/passes/rewrite.hpp"

namespace rungs::passes {

using ir::Node;
using ir::Op;

bool fold_constants(ir::GraphImpl& g) {
  Rewriter rw(g);
  for (uint32_t id = 0; id < g.nodes.size(); ++id) {
    const Node& n = g.nodes[id];
    if (n.op == Op::Input || n.op == Op::Param || n.op == Op::Constant || n.in.empty()) continue;
    bool all_constant = true;
    for (uint32_t src : n.in) all_constant = all_constant && g.nodes[src].op == Op::Constant;
    if (!all_constant || shape_numel(n.shape) > kMaxFoldedElements) continue;

    std::vector<backend::TensorArg> args;
    for (uint32_t src : n.in) args.push_back({g.nodes[src].data->data(), backend::Dims::of(g.nodes[src].shape)});
    const backend::Dims od = backend::Dims::of(n.shape);
    // Kernels may read (never write) past a buffer's end; inputs are vectors of exact size, so
    // give the kernel padded copies as the executor would.
    constexpr size_t slack = backend::kReadPastBytes / sizeof(float);
    std::vector<std::vector<float>> padded;
    padded.reserve(args.size());
    for (auto& a : args) {
      padded.emplace_back(a.data, a.data + a.dims.numel());
      padded.back().resize(padded.back().size() + slack);
      a.data = padded.back().data();
    }
    std::vector<float> out(static_cast<size_t>(od.numel()) + slack);
    auto kernel = backend::make_reference_kernel({&g, id, PrecisionPolicy::f32(), 1});
    std::vector<float> scratch(kernel->scratch_floats());
    backend::RunContext ctx;
    ctx.scratch = scratch.data();
    kernel->run(ctx, args, out.data(), od);
    out.resize(static_cast<size_t>(od.numel()));

    Node c;
    c.op = Op::Constant;
    c.shape = n.shape;
    c.data = std::make_shared<const std::vector<float>>(std::move(out));
    rw.replace(id, std::move(c));
  }
  return rw.finish();
}

}  // namespace rungs::passes
