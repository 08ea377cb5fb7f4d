// SPDX-License-Identifier: Apache-2.0
// pad_rows / slice_rows: the row copies around a bucket's run (rungs/cache.hpp).
#include <algorithm>
#include <string>

#include "core/check.hpp"
#include "rungs/cache.hpp"

namespace rungs {
namespace {

size_t rows_of(std::span<const float> data, size_t inner, const char* who) {
  if (inner == 0) fail(ErrorCode::InvalidArgument, std::string(who) + ": inner must be >= 1 (got 0)");
  if (data.size() % inner != 0)
    fail(ErrorCode::InvalidArgument, std::string(who) + ": " + std::to_string(data.size()) +
                                         " values are not a whole number of rows of inner " + std::to_string(inner));
  return data.size() / inner;
}

}  // namespace

std::vector<float> pad_rows(std::span<const float> data, size_t inner, uint64_t upper) {
  const size_t rows = rows_of(data, inner, "pad_rows");
  if (rows > upper)
    fail(ErrorCode::InvalidArgument, "pad_rows: " + std::to_string(rows) + " rows (" + std::to_string(data.size()) +
                                         " values of inner " + std::to_string(inner) + ") exceed upper " +
                                         std::to_string(upper));
  // upper >= rows, so upper * inner cannot overflow past what a vector could hold unless it is huge;
  // refuse a padded size that does not fit in size_t instead of wrapping.
  if (inner != 0 && upper > SIZE_MAX / inner)
    fail(ErrorCode::OutOfRange, "pad_rows: upper " + std::to_string(upper) + " x inner " + std::to_string(inner) +
                                    " values do not fit in memory");
  std::vector<float> out(static_cast<size_t>(upper) * inner, 0.0f);
  std::copy(data.begin(), data.end(), out.begin());
  return out;
}

std::vector<float> slice_rows(std::span<const float> data, size_t inner, size_t actual) {
  const size_t rows = rows_of(data, inner, "slice_rows");
  if (actual > rows)
    fail(ErrorCode::InvalidArgument, "slice_rows: actual " + std::to_string(actual) + " rows exceed upper " +
                                         std::to_string(rows) + " (the data holds " + std::to_string(data.size()) +
                                         " values of inner " + std::to_string(inner) + ")");
  return std::vector<float>(data.begin(), data.begin() + static_cast<ptrdiff_t>(actual * inner));
}

}  // namespace rungs
