// SPDX-License-Identifier: Apache-2.0
// core/check.hpp: the two error channels (Halide's user_assert / internal_assert).
//   fail(code, msg): a user mistake; the message names the thing at fault and, where it helps, the fix.
//   internal_check(cond, msg): a broken invariant of rungs itself (ErrorCode::Internal), reported
//   with the file and line of the check.
#pragma once

#include <string>
#include <string_view>

#include "rungs/error.hpp"

namespace rungs {

[[noreturn]] inline void fail(ErrorCode code, const std::string& message) { throw Error(code, message); }

// Where a check was written: the caller's file and line, taken by default arguments. (Emscripten
// 3.1.6's libc++ has no <source_location>; __builtin_FILE / __builtin_LINE are what
// std::source_location::current() is built on, in g++ and clang alike.)
struct SourceLocation {
  const char* file = "";
  int line = 0;
  static constexpr SourceLocation current(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    return {file, line};
  }
  // The path from the repository's top-level folder on ("core/compile/session.cpp"), whatever
  // directory the build ran in.
  std::string_view relative_file() const {
    const std::string_view path(file);
    size_t first = path.size();
    for (std::string_view top : {"core/", "backends/", "wasm/", "native_cli/", "tests/", "examples/"}) {
      for (size_t at = path.find(top); at < first; at = path.find(top, at + 1))
        if (at == 0 || path[at - 1] == '/') first = at;
    }
    return first < path.size() ? path.substr(first) : path;
  }
};

[[noreturn]] inline void internal_error(const std::string& what, SourceLocation where = SourceLocation::current()) {
  throw Error(ErrorCode::Internal, "internal error: " + what + " (" + std::string(where.relative_file()) + ":" +
                                       std::to_string(where.line) + "; please report)");
}

inline void internal_check(bool ok, const char* what, SourceLocation where = SourceLocation::current()) {
  if (!ok) internal_error(what, where);
}

}  // namespace rungs
