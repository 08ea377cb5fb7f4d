// SPDX-License-Identifier: Apache-2.0
// core/cache/build_and_compile.hpp: what both caches do on a miss. Compiles what a build callable
// returned (a Graph or a HirModule) with the cache's precision policy when the options carry none,
// then uploads the build's params. `before_upload`, when given, sees the compiled graph and the
// params before any is uploaded (and may throw to refuse them). Throws whatever the compiler,
// set_param or before_upload throws.
#pragma once

#include <functional>
#include <memory>
#include <optional>

#include "rungs/cache.hpp"

namespace rungs::cache_detail {

std::unique_ptr<CompiledGraph> build_and_compile(Device device, const std::optional<PrecisionPolicy>& policy,
                                                 detail::Built built, const CompileOptions& options,
                                                 const std::function<void(const CompiledGraph&, const ParamMap&)>&
                                                     before_upload = nullptr);

}  // namespace rungs::cache_detail
