// SPDX-License-Identifier: Apache-2.0
// core/cache/byte_budget.hpp: compiling under a byte limit, for both caches (compile_within), and
// the BucketedCompileCache's running budget (ByteBudget, set_max_bytes).
//
// Why: every bucket of a ladder is a full compiled graph; a long ladder of a big model, or one
// hostile key range, can hold more memory than the process may use. The budget counts what each
// compiled bucket holds (arena + params, as CompileReport reports them and CompileCache counts
// them) and refuses, with Error(OutOfRange), a compile that would pass it: first the arena, before
// it is planned into memory (CompileOptions::max_arena_bytes), then the params at their stored
// width, before they are uploaded; the exact figure is charged last, under the lock, so racing
// compiles of two buckets can never pass the budget together. A refused compile leaves nothing
// behind.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "core/cache/build_and_compile.hpp"
#include "rungs/error.hpp"

namespace rungs::cache_detail {

class ByteBudget {
 public:
  void set_limit(size_t max_bytes);
  size_t limit() const;  // 0: no limit
  size_t used() const;

  // What one more compile may still use, or std::nullopt without a limit.
  std::optional<size_t> remaining() const;
  // Throws Error(OutOfRange) "<who> needs <bytes> bytes (<detail>), ..." when `bytes` do not fit
  // what is left now, else charges them (atomically with the check).
  void charge(size_t bytes, const std::string& who, const std::string& detail);

 private:
  void check_locked(size_t bytes, const std::string& who, const std::string& detail) const;
  mutable std::mutex m_;
  size_t limit_ = 0;
  size_t used_ = 0;
};

// How a cache words a refusal: "<who> needs <bytes> bytes (<detail>), <over>" for the params and
// the exact figure, and "<who>: the arena does not fit <budget> (<compiler's message>); <advice>"
// for an arena refused before it is planned.
struct Refusal {
  std::string who;                                // "BucketedCompileCache: bucket [1, 9) (upper 8)"
  std::function<std::string(size_t bytes)> over;  // the rest of the sentence for `bytes` too many
  std::string budget;                             // "the byte budget of 4096 bytes"
  std::string advice;                             // "raise set_max_bytes"
};

// The one way both caches compile under a byte limit: the arena is refused before it is planned
// into memory (CompileOptions::max_arena_bytes), the params at their stored width before they are
// uploaded, and the compiled graph's arena + params last, each with Error(OutOfRange) as `refusal`
// words it. `allowance`: what this compile may take (nullopt: no limit). Returns the graph and the
// bytes it holds (CompileReport::arena_bytes + param_bytes).
struct Budgeted {
  std::unique_ptr<CompiledGraph> graph;
  size_t bytes = 0;
};
Budgeted compile_within(Device device, const std::optional<PrecisionPolicy>& policy, detail::Built built,
                        const CompileOptions& options, std::optional<size_t> allowance, const Refusal& refusal);

}  // namespace rungs::cache_detail
