// SPDX-License-Identifier: Apache-2.0
// core/compile/pipeline.hpp: the fusion-first pass pipeline, one short linear script.
#pragma once

#include <span>
#include <vector>

#include "core/ir/graph_impl.hpp"
#include "rungs/session.hpp"

namespace rungs::compile {

// Runs every pass in order on `g`, appending one PassReport per pass (time, node counts, and the
// IR text after it when options.dump_passes and the pass changed the graph).
void run_pipeline(ir::GraphImpl& g, const CompileOptions& options, std::vector<PassReport>& log);

// A graph-rewriting pass by name, as the pipeline runs it and reports it.
struct NamedPass {
  const char* name;
  bool (*run)(ir::GraphImpl&);  // true when the graph changed
};

// The fusion passes in the order run_pipeline runs them when CompileOptions::fusion is set (the
// pass-contract tests walk the same list).
std::span<const NamedPass> fusion_passes();

// The constant-folding pass as the pipeline runs it: passes::fold_constants with an evaluator that
// runs the node's reference kernel (Device::Reference).
bool fold_constants(ir::GraphImpl& g);

}  // namespace rungs::compile
