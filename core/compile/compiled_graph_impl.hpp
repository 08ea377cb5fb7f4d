// SPDX-License-Identifier: Apache-2.0
// core/compile/compiled_graph_impl.hpp: what a CompiledGraph holds.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>

#include "core/compile/executor.hpp"
#include "core/passes/active_extent.hpp"
#include "rungs/session.hpp"

namespace rungs {

struct CompiledGraph::Impl {
  std::unique_ptr<compile::Executor> exec;
  CompileReport report;
  // set_param takes it exclusively, run / run_rows / param_is_set shared: a param set while other
  // threads run is seen by each run entirely old or entirely new.
  mutable std::shared_mutex params_mu;
  // Active extent: analysed once by prepare_active_rows.
  std::mutex rows_mu;
  std::optional<passes::ActiveRows> rows;
  std::string rows_reason = "prepare_active_rows was not called";
  std::string rows_differs;  // ActiveRows::differs_from_padding of the prepared extent
};

}  // namespace rungs
