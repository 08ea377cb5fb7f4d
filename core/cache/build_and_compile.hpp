// core/cache/build_and_compile.hpp: what both caches do on a miss. Compiles what a build callable
// returned (a Graph or a HirModule) with the cache's precision policy when the options carry none,
// then uploads the build's params. Throws whatever the compiler or set_param throws.
#pragma once

#include <memory>
#include <optional>

#include "rungs/cache.hpp"

namespace rungs::cache_detail {

std::unique_ptr<CompiledGraph> build_and_compile(Device device, const std::optional<PrecisionPolicy>& policy,
                                                 detail::Built built, const CompileOptions& options);

}  // namespace rungs::cache_detail
