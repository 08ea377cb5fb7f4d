// SPDX-License-Identifier: Apache-2.0
#include "core/cache/build_and_compile.hpp"

#include <cstdint>
#include <span>
#include <variant>

namespace rungs::cache_detail {

std::unique_ptr<CompiledGraph> build_and_compile(Device device, const std::optional<PrecisionPolicy>& policy,
                                                 detail::Built built, const CompileOptions& options,
                                                 const std::function<void(const CompiledGraph&, const ParamMap&, const PrecisionPolicy&)>&
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
  if (before_upload) before_upload(*graph, built.params, opts.policy.value_or(PrecisionPolicy::f32()));
  for (const auto& [name, data] : built.params) graph->set_param(name, std::span<const float>(data));
  return graph;
}

UploadBytes bytes_before_upload(const CompiledGraph& graph, const ParamMap& params, const PrecisionPolicy& policy) {
  UploadBytes b;
  b.arena = graph.report().arena_bytes;
  for (const auto& [name, data] : params) b.values += data.size();
  b.width = policy.weights == PrecisionPolicy::Format::F32 ? sizeof(float) : sizeof(uint16_t);
  return b;
}

}  // namespace rungs::cache_detail
