// SPDX-License-Identifier: Apache-2.0
// core/cache/byte_budget.hpp: the BucketedCompileCache byte budget (set_max_bytes).
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
#include <mutex>
#include <optional>
#include <string>

namespace rungs::cache_detail {

class ByteBudget {
 public:
  void set_limit(size_t max_bytes);
  size_t limit() const;  // 0: no limit
  size_t used() const;

  // What one more compile may still use, or std::nullopt without a limit.
  std::optional<size_t> remaining() const;
  // Throws Error(OutOfRange) "<who> needs <bytes> bytes (<detail>), ..." when `bytes` do not fit
  // what is left now; charges nothing.
  void check(size_t bytes, const std::string& who, const std::string& detail) const;
  // As check, then charges `bytes` (atomically with the check).
  void charge(size_t bytes, const std::string& who, const std::string& detail);

 private:
  void check_locked(size_t bytes, const std::string& who, const std::string& detail) const;
  mutable std::mutex m_;
  size_t limit_ = 0;
  size_t used_ = 0;
};

}  // namespace rungs::cache_detail
