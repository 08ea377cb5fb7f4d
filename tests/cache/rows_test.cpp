// SPDX-License-Identifier: Apache-2.0
// pad_rows / slice_rows: values, and every error.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rungs/cache.hpp"
#include "rungs/error.hpp"

namespace rungs {
namespace {

template <class Fn>
void expect_invalid(Fn&& fn, const std::string& substring) {
  try {
    fn();
    FAIL() << "expected an Error containing '" << substring << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find(substring), std::string::npos) << e.what();
  }
}

TEST(Rows, PadAppendsZeroRows) {
  const std::vector<float> data{1, 2, 3, 4, 5, 6};  // [3, 2]
  EXPECT_EQ(pad_rows(data, 2, 5), (std::vector<float>{1, 2, 3, 4, 5, 6, 0, 0, 0, 0}));
  EXPECT_EQ(pad_rows(data, 2, 3), data);
  EXPECT_EQ(pad_rows(data, 1, 7), (std::vector<float>{1, 2, 3, 4, 5, 6, 0}));
  EXPECT_EQ(pad_rows(std::vector<float>{}, 4, 2), std::vector<float>(8, 0.0f));
}

TEST(Rows, SliceKeepsLeadingRows) {
  const std::vector<float> data{1, 2, 3, 4, 5, 6};
  EXPECT_EQ(slice_rows(data, 2, 2), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(slice_rows(data, 3, 2), data);
  EXPECT_EQ(slice_rows(data, 2, 0), std::vector<float>{});
}

TEST(Rows, Errors) {
  const std::vector<float> data{1, 2, 3, 4, 5, 6};
  expect_invalid([&] { pad_rows(data, 0, 4); }, "inner");
  expect_invalid([&] { pad_rows(data, 4, 4); }, "not a whole number of rows");
  expect_invalid([&] { pad_rows(data, 2, 2); }, "exceed upper");
  expect_invalid([&] { slice_rows(data, 0, 1); }, "inner");
  expect_invalid([&] { slice_rows(data, 5, 1); }, "not a whole number of rows");
  expect_invalid([&] { slice_rows(data, 2, 4); }, "exceed upper");
}

}  // namespace
}  // namespace rungs
