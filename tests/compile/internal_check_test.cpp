// SPDX-License-Identifier: Apache-2.0
// internal_check / internal_error (core/check.hpp): a broken invariant is Error(Internal) naming
// the file and line of the check, relative to the repository.
#include <gtest/gtest.h>

#include <string>

#include "core/check.hpp"

namespace rungs {
namespace {

TEST(InternalCheck, ReportsTheFileAndLineOfTheCheck) {
  const int line = __LINE__ + 2;
  try {
    internal_check(false, "the answer is not 42");
    FAIL() << "no error thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Internal);
    EXPECT_EQ(std::string(e.what()), "internal error: the answer is not 42 (tests/compile/internal_check_test.cpp:" +
                                         std::to_string(line) + "; please report)");
  }
  EXPECT_NO_THROW(internal_check(true, "never"));
}

TEST(InternalCheck, RelativeFileKeepsThePathFromTheTopFolder) {
  auto rel = [](const char* path) { return std::string(SourceLocation{path, 1}.relative_file()); };
  EXPECT_EQ(rel("/home/u/rungs/core/compile/session.cpp"), "core/compile/session.cpp");
  EXPECT_EQ(rel("../../backends/cpu/isa.cpp"), "backends/cpu/isa.cpp");
  EXPECT_EQ(rel("/x/mytests/core/a.cpp"), "core/a.cpp");  // "tests/" inside a name
  EXPECT_EQ(rel("elsewhere.cpp"), "elsewhere.cpp");
}

}  // namespace
}  // namespace rungs
