// SPDX-License-Identifier: Apache-2.0
// core/check.hpp: the two error channels (Halide's user_assert / internal_assert).
//   fail(code, msg): a user mistake; the message names the thing at fault and, where it helps, the fix.
//   internal_check(cond, msg): a broken invariant of rungs itself (ErrorCode::Internal).
#pragma once

#include <string>

#include "rungs/error.hpp"

namespace rungs {

[[noreturn]] inline void fail(ErrorCode code, const std::string& message) { throw Error(code, message); }

inline void internal_check(bool ok, const char* what) {
  if (!ok) throw Error(ErrorCode::Internal, std::string("internal error: ") + what + " (please report)");
}

}  // namespace rungs
