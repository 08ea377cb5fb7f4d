// SPDX-License-Identifier: Apache-2.0
// core/text/read_file.hpp: a vocabulary file's bytes, or Error(InvalidArgument) naming it.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include "rungs/error.hpp"

namespace rungs::text {

inline std::string read_vocab_file(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::InvalidArgument, std::string(what) + ": cannot open '" + path + "'");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) throw Error(ErrorCode::InvalidArgument, std::string(what) + ": cannot read '" + path + "'");
  return std::move(bytes).str();
}

}  // namespace rungs::text
