// SPDX-License-Identifier: Apache-2.0
// rungs/error.hpp: the one exception type every user mistake throws.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace rungs {

enum class ErrorCode {
  InvalidArgument,
  ShapeMismatch,
  UnknownName,
  MissingInput,
  ParamNotSet,
  OutOfRange,
  Unsupported,
  ParseError,
  Internal,
  // The compiled graph's arena would pass CompileOptions::max_arena_bytes (the limit a caller, or a
  // cache's byte budget, set); the same graph may compile under a larger limit.
  ArenaLimit,
};

std::string_view to_string(ErrorCode code);

// Thrown for every user mistake (wrong shapes, unknown names, bad files, ...) with a message that
// names the thing at fault, and for broken invariants (ErrorCode::Internal). A failed call leaves the
// object it was called on usable and unchanged.
class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace rungs
