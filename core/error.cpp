// SPDX-License-Identifier: Apache-2.0
#include "rungs/error.hpp"

namespace rungs {

std::string_view to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::InvalidArgument: return "InvalidArgument";
    case ErrorCode::ShapeMismatch: return "ShapeMismatch";
    case ErrorCode::UnknownName: return "UnknownName";
    case ErrorCode::MissingInput: return "MissingInput";
    case ErrorCode::ParamNotSet: return "ParamNotSet";
    case ErrorCode::OutOfRange: return "OutOfRange";
    case ErrorCode::Unsupported: return "Unsupported";
    case ErrorCode::ParseError: return "ParseError";
    case ErrorCode::Internal: return "Internal";
    case ErrorCode::ArenaLimit: return "ArenaLimit";
  }
  return "Unknown";
}

}  // namespace rungs
