// SPDX-License-Identifier: Apache-2.0
// core/cache/build_and_compile.hpp: what both caches do on a miss. Compiles what a build callable
// returned (a Graph or a HirModule) with the cache's precision policy when the options carry none,
// then uploads the build's params. `before_upload`, when given, sees the compiled graph, the
// params and the policy it was compiled with before any param is uploaded (and may throw to
// refuse them). Throws whatever the compiler,
// set_param or before_upload throws.
#pragma once

#include <functional>
#include <memory>
#include <optional>

#include "rungs/cache.hpp"

namespace rungs::cache_detail {

std::unique_ptr<CompiledGraph> build_and_compile(Device device, const std::optional<PrecisionPolicy>& policy,
                                                 detail::Built built, const CompileOptions& options,
                                                 const std::function<void(const CompiledGraph&, const ParamMap&, const PrecisionPolicy&)>&
                                                     before_upload = nullptr);

// The bytes a compiled graph holds once `params` are uploaded under `policy`, counted before the
// upload (what both caches' byte budgets refuse on): its arena plus every value at the width the
// policy stores weights in.
struct UploadBytes {
  size_t arena = 0;   // CompileReport::arena_bytes
  size_t values = 0;  // param values to upload
  size_t width = 0;   // bytes per stored value: 4 under f32, 2 under bf16 / f16 weights
  size_t total() const { return arena + values * width; }
};
UploadBytes bytes_before_upload(const CompiledGraph& graph, const ParamMap& params, const PrecisionPolicy& policy);

}  // namespace rungs::cache_detail
