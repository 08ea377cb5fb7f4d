// SPDX-License-Identifier: Apache-2.0
// native_cli/npy.hpp: NumPy .npy files (format versions 1.0, 2.0 and 3.0), what `rungs run`
// reads inputs from (--input NAME=FILE.npy) and writes outputs to (--format npy). Debian 12 ships
// no C++ .npy library (no cnpy, no libnpy), so this is a small one: little-endian (or byte-sized)
// int64, int32, bool and float32 in C order are read; anything else is refused with an error
// naming the file and what it holds (rungs::Error ParseError). Only float32 is written.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rungs/types.hpp"

namespace rungs::cli {

struct NpyArray {
  std::string dtype;          // "int64", "int32", "bool" or "float32" (the file's element type)
  Shape shape;                // () for a scalar
  std::vector<int64_t> ints;  // the values of an int64, int32 or bool file
  std::vector<float> floats;  // the values of a float32 file
  size_t size() const { return dtype == "float32" ? floats.size() : ints.size(); }
};

// Parses the bytes of a .npy file; `what` names it in errors ("input 'ids' (ids.npy)").
NpyArray parse_npy(std::string_view bytes, const std::string& what);
// Reads and parses a file (at most `max_bytes` of it; a larger file is refused before reading).
NpyArray read_npy(const std::string& path, const std::string& what, uint64_t max_bytes);

// The values as float32, converted exactly: an integer an f32 cannot hold exactly (|v| > 2^24)
// is an Error(InvalidArgument) naming `what`, the index and the value; never a silent change.
std::vector<float> npy_to_floats(const NpyArray& a, const std::string& what);

// A float32 .npy (format 1.0, C order, header padded to 64 bytes as numpy writes it).
std::string npy_bytes(const Shape& shape, const std::vector<float>& data);
void write_npy(const std::string& path, const Shape& shape, const std::vector<float>& data);

}  // namespace rungs::cli
