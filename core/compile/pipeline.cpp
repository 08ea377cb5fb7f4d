// SPDX-License-Identifier: Apache-2.0
#include "core/compile/pipeline.hpp"

#include <chrono>
#include <vector>

#include "backends/kernel.hpp"
#include "core/compile/kernel_params.hpp"

#include "core/passes/constant_fold.hpp"
#include "core/passes/dead_code.hpp"
#include "core/passes/fuse_activation.hpp"
#include "core/passes/fuse_add_norm.hpp"
#include "core/passes/fuse_attention.hpp"
#include "core/passes/fuse_elementwise.hpp"
#include "core/passes/fuse_layer_norm.hpp"
#include "core/passes/fuse_matmul_epilogue.hpp"
#include "core/passes/fuse_mean_pool.hpp"
#include "core/passes/fuse_qkv.hpp"
#include "core/passes/verify.hpp"

namespace rungs::compile {

namespace {

template <typename Pass>
void step(const char* name, ir::GraphImpl& g, const CompileOptions& options, std::vector<PassReport>& log,
          Pass&& pass) {
  PassReport r;
  r.name = name;
  r.nodes_before = g.nodes.size();
  auto t0 = std::chrono::steady_clock::now();
  r.changed = pass(g);
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  r.nodes_after = g.nodes.size();
  if (r.changed && options.dump_passes) r.ir_after = ir::to_text(g);
  log.push_back(std::move(r));
}

// The value of a node whose inputs are all constants, from its reference kernel.
std::vector<float> evaluate_on_reference(const ir::GraphImpl& g, uint32_t id) {
  const ir::Node& n = g.nodes[id];
  // Kernels may read (never write) past a buffer's end; constants are vectors of exact size, so
  // give the kernel padded copies as the executor would.
  constexpr size_t slack = backend::kReadPastBytes / sizeof(float);
  std::vector<backend::TensorArg> args;
  std::vector<std::vector<float>> padded;
  padded.reserve(n.in.size());
  for (uint32_t src : n.in) {
    const ir::Node& c = g.nodes[src];
    padded.emplace_back(*c.data);
    padded.back().resize(padded.back().size() + slack);
    args.push_back({padded.back().data(), backend::Dims::of(c.shape)});
  }
  const backend::Dims od = backend::Dims::of(n.shape);
  std::vector<float> out(static_cast<size_t>(od.numel()) + slack);
  auto kernel = backend::make_reference_kernel(kernel_params(g, id, PrecisionPolicy::f32(), 1));
  std::vector<float> scratch(kernel->scratch_floats());
  backend::RunContext ctx;
  ctx.scratch = scratch.data();
  kernel->run(ctx, args, out.data(), od);
  out.resize(static_cast<size_t>(od.numel()));
  return out;
}

bool verify_pass(ir::GraphImpl& g) {
  passes::verify(g);
  return false;
}

}  // namespace

bool fold_constants(ir::GraphImpl& g) { return passes::fold_constants(g, evaluate_on_reference); }

std::span<const NamedPass> fusion_passes() {
  static constexpr NamedPass kPasses[] = {
      {"fuse_layer_norm", passes::fuse_layer_norm},
      {"fuse_activation", passes::fuse_activation},
      {"fuse_mean_pool", passes::fuse_mean_pool},
      {"fuse_attention", passes::fuse_attention},
      {"fuse_matmul_epilogue", passes::fuse_matmul_epilogue},
      {"fuse_qkv", passes::fuse_qkv},
      {"fuse_add_norm", passes::fuse_add_norm},
      {"fuse_elementwise", passes::fuse_elementwise},
  };
  return kPasses;
}

void run_pipeline(ir::GraphImpl& g, const CompileOptions& options, std::vector<PassReport>& log) {
  step("verify", g, options, log, verify_pass);
  step("dead_code", g, options, log, passes::eliminate_dead_code);
  step("constant_fold", g, options, log, fold_constants);
  if (options.fusion) {
    for (const NamedPass& p : fusion_passes()) step(p.name, g, options, log, p.run);
    step("dead_code", g, options, log, passes::eliminate_dead_code);
  }
  step("verify", g, options, log, verify_pass);
}

}  // namespace rungs::compile
