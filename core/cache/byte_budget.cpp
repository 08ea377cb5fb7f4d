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

void ByteBudget::check(size_t bytes, const std::string& who, const std::string& detail) const {
  std::lock_guard<std::mutex> lock(m_);
  check_locked(bytes, who, detail);
}

void ByteBudget::charge(size_t bytes, const std::string& who, const std::string& detail) {
  std::lock_guard<std::mutex> lock(m_);
  check_locked(bytes, who, detail);
  used_ += bytes;
}

}  // namespace rungs::cache_detail
