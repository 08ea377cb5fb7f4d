// core/compile/compiled_graph_impl.hpp: what a CompiledGraph holds.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "core/compile/executor.hpp"
#include "core/passes/active_extent.hpp"
#include "rungs/session.hpp"

namespace rungs {

struct CompiledGraph::Impl {
  std::unique_ptr<compile::Executor> exec;
  CompileReport report;
  // Active extent: analysed once by prepare_active_rows.
  std::mutex rows_mu;
  std::optional<passes::ActiveRows> rows;
  std::string rows_reason = "prepare_active_rows was not called";
};

}  // namespace rungs
