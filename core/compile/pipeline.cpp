// SPDX-License-Identifier: Apache-2.0
#include "core/compile/pipeline.hpp"

#include <chrono>

#include "core/passes/constant_fold.hpp"
#include "core/passes/dead_code.hpp"
#include "core/passes/fuse_add_norm.hpp"
#include "core/passes/fuse_attention.hpp"
#include "core/passes/fuse_elementwise.hpp"
#include "core/passes/fuse_matmul_epilogue.hpp"
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

bool verify_pass(ir::GraphImpl& g) {
  passes::verify(g);
  return false;
}

}  // namespace

void run_pipeline(ir::GraphImpl& g, const CompileOptions& options, std::vector<PassReport>& log) {
  step("verify", g, options, log, verify_pass);
  step("dead_code", g, options, log, passes::eliminate_dead_code);
  step("constant_fold", g, options, log, passes::fold_constants);
  if (options.fusion) {
    step("fuse_attention", g, options, log, passes::fuse_attention);
    step("fuse_matmul_epilogue", g, options, log, passes::fuse_matmul_epilogue);
    step("fuse_add_norm", g, options, log, passes::fuse_add_norm);
    step("fuse_elementwise", g, options, log, passes::fuse_elementwise);
    step("dead_code", g, options, log, passes::eliminate_dead_code);
  }
  step("verify", g, options, log, verify_pass);
}

}  // namespace rungs::compile
