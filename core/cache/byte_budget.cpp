// SPDX-License-Identifier: Apache-2.0
#include "core/cache/byte_budget.hpp"

#include "core/check.hpp"

namespace rungs::cache_detail {

void ByteBudget::set_limit(size_t max_bytes) {
  std::lock_guard<std::mutex> lock(m_);
  limit_ = max_bytes;
}

size_t ByteBudget::limit() const {
  std::lock_guard<std::mutex> lock(m_);
  return limit_;
}

size_t ByteBudget::used() const {
  std::lock_guard<std::mutex> lock(m_);
  return used_;
}

std::optional<size_t> ByteBudget::remaining() const {
  std::lock_guard<std::mutex> lock(m_);
  if (limit_ == 0) return std::nullopt;
  return used_ >= limit_ ? 0 : limit_ - used_;
}

void ByteBudget::check_locked(size_t bytes, const std::string& who, const std::string& detail) const {
  if (limit_ == 0) return;
  const size_t left = used_ >= limit_ ? 0 : limit_ - used_;
  if (bytes > left)
    fail(ErrorCode::OutOfRange, who + " needs " + std::to_string(bytes) + " bytes (" + detail + "), but the byte budget has " +
                                    std::to_string(left) + " of " + std::to_string(limit_) +
                                    " bytes left; raise set_max_bytes or use fewer or smaller buckets");
}

void ByteBudget::charge(size_t bytes, const std::string& who, const std::string& detail) {
  std::lock_guard<std::mutex> lock(m_);
  check_locked(bytes, who, detail);
  used_ += bytes;
}

Budgeted compile_within(Device device, const std::optional<PrecisionPolicy>& policy, detail::Built built,
                        const CompileOptions& options, std::optional<size_t> allowance, const Refusal& refusal) {
  auto refuse_if_over = [&](size_t bytes, const std::string& detail) {
    if (allowance && bytes > *allowance)
      fail(ErrorCode::OutOfRange, refusal.who + " needs " + std::to_string(bytes) + " bytes (" + detail + "), " + refusal.over(bytes));
  };
  CompileOptions opts = options;
  const bool budget_limits_arena = allowance && (!opts.max_arena_bytes || *allowance < *opts.max_arena_bytes);
  if (budget_limits_arena) opts.max_arena_bytes = *allowance;
  auto before_upload = [&](const CompiledGraph& g, const ParamMap& params, const PrecisionPolicy& used) {
    const UploadBytes need = bytes_before_upload(g, params, used);
    refuse_if_over(need.total(), "arena " + std::to_string(need.arena) + " + " + std::to_string(need.values) +
                                     " param values at " + std::to_string(need.width) + " bytes, before upload");
  };
  Budgeted out;
  try {
    out.graph = build_and_compile(device, policy, std::move(built), opts, before_upload);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::ArenaLimit || !budget_limits_arena) throw;
    fail(ErrorCode::OutOfRange, refusal.who + ": the arena does not fit " + refusal.budget + " (" + e.what() + "); " + refusal.advice);
  }
  const CompileReport& r = out.graph->report();
  out.bytes = r.arena_bytes + r.param_bytes;
  refuse_if_over(out.bytes, "arena " + std::to_string(r.arena_bytes) + " + params " + std::to_string(r.param_bytes));
  return out;
}

}  // namespace rungs::cache_detail
