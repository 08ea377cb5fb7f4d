// SPDX-License-Identifier: Apache-2.0
#include "core/cache/build_and_compile.hpp"

#include <span>
#include <variant>

namespace rungs::cache_detail {

std::unique_ptr<CompiledGraph> build_and_compile(Device device, const std::optional<PrecisionPolicy>& policy,
                                                 detail::Built built, const CompileOptions& options,
                                                 const std::function<void(const CompiledGraph&, const ParamMap&)>&
                                                     before_upload) {
  CompileOptions opts = options;
  if (!opts.policy) opts.policy = policy;  // api.md 5.1: the cache's policy when options carry none
  Session session(device);
  if (opts.policy) session.with_policy(*opts.policy);
  std::unique_ptr<CompiledGraph> graph;
  if (const Graph* g = std::get_if<Graph>(&built.source)) {
    graph = std::make_unique<CompiledGraph>(session.compile(*g, opts));
  } else {
    graph = std::make_unique<CompiledGraph>(session.compile_hir(std::get<HirModule>(built.source), opts));
  }
  if (before_upload) before_upload(*graph, built.params);
  for (const auto& [name, data] : built.params) graph->set_param(name, std::span<const float>(data));
  return graph;
}

}  // namespace rungs::cache_detail
