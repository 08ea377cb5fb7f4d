// SPDX-License-Identifier: Apache-2.0
#include "npy.hpp"

#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "limits.hpp"
#include "rungs/error.hpp"

namespace rungs::cli {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& why) {
  throw Error(ErrorCode::ParseError, what + ": not a .npy file rungs reads: " + why);
}

uint32_t le(std::string_view b, size_t at, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint32_t>(static_cast<unsigned char>(b[at + i])) << (8 * i);
  return v;
}

// The header: a Python dict literal such as {'descr': '<i8', 'fortran_order': False, 'shape': (1, 7), }
struct Header {
  std::string descr;
  bool fortran = false;
  Shape shape;
  bool has_descr = false, has_order = false, has_shape = false;
};

class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& what) : s_(text), what_(what) {}

  Header parse() {
    Header h;
    expect('{');
    while (true) {
      ws();
      if (peek() == '}') break;
      const std::string key = quoted();
      ws();
      expect(':');
      ws();
      if (key == "descr") {
        h.descr = quoted();
        h.has_descr = true;
      } else if (key == "fortran_order") {
        h.fortran = boolean();
        h.has_order = true;
      } else if (key == "shape") {
        h.shape = tuple();
        h.has_shape = true;
      } else {
        bad("unknown header key '" + printable(key) + "'");
      }
      ws();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      ws();
      if (peek() != '}') bad("expected ',' or '}' after '" + key + "'");
    }
    ++i_;
    if (!h.has_descr || !h.has_order || !h.has_shape) bad("the header lacks 'descr', 'fortran_order' or 'shape'");
    return h;
  }

 private:
  [[noreturn]] void bad(const std::string& why) { fail(what_, "header " + why); }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void ws() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  void expect(char c) {
    ws();
    if (peek() != c) bad(std::string("expected '") + c + "' at byte " + std::to_string(i_));
    ++i_;
  }
  std::string quoted() {
    const char q = peek();
    if (q != '\'' && q != '"') bad("expected a quoted string at byte " + std::to_string(i_));
    const size_t end = s_.find(q, i_ + 1);
    if (end == std::string_view::npos) bad("an unterminated string");
    std::string v(s_.substr(i_ + 1, end - i_ - 1));
    i_ = end + 1;
    return v;
  }
  bool boolean() {
    if (s_.substr(i_, 4) == "True") return i_ += 4, true;
    if (s_.substr(i_, 5) == "False") return i_ += 5, false;
    bad("'fortran_order' must be True or False");
  }
  Shape tuple() {
    expect('(');
    Shape shape;
    while (true) {
      ws();
      if (peek() == ')') break;
      if (!std::isdigit(static_cast<unsigned char>(peek()))) bad("'shape' must be a tuple of whole numbers");
      int64_t d = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        if (d > (INT64_MAX - 9) / 10) bad("a dimension of 'shape' is too large");
        d = d * 10 + (s_[i_++] - '0');
      }
      if (peek() == 'L') ++i_;  // Python 2 longs
      shape.push_back(d);
      if (shape.size() > 32) bad("'shape' has more than 32 dimensions");
      ws();
      if (peek() == ',') ++i_;
      else if (peek() != ')') bad("'shape' must be a tuple of whole numbers");
    }
    ++i_;
    return shape;
  }

  std::string_view s_;
  const std::string& what_;
  size_t i_ = 0;
};

struct DType {
  const char* name;
  size_t bytes;
};

DType dtype_of(const std::string& descr, const std::string& what) {
  if (descr == "<i8") return {"int64", 8};
  if (descr == "<i4") return {"int32", 4};
  if (descr == "|b1") return {"bool", 1};
  if (descr == "<f4") return {"float32", 4};
  std::string why = "it holds '" + printable(descr) + "'";
  if (!descr.empty() && descr[0] == '>') why += " (big-endian)";
  else if (descr == "<f8") why += " (float64)";
  else if (descr == "<f2") why += " (float16)";
  fail(what, why +
                 "; rungs reads int64 ('<i8'), int32 ('<i4'), bool ('|b1') and float32 ('<f4'): convert it, e.g. "
                 "np.save(path, a.astype(np.float32))");
}

}  // namespace

NpyArray parse_npy(std::string_view b, const std::string& what) {
  if (b.size() < 10 || b.substr(0, 6) != std::string_view("\x93NUMPY", 6)) fail(what, "it does not start with \\x93NUMPY");
  const int major = static_cast<unsigned char>(b[6]);
  if (major < 1 || major > 3) fail(what, "format version " + std::to_string(major) + " (rungs reads 1.0, 2.0 and 3.0)");
  const size_t len_bytes = major == 1 ? 2 : 4;
  if (b.size() < 8 + len_bytes) fail(what, "the file ends inside its header");
  const size_t start = 8 + len_bytes;
  const size_t header_len = le(b, 8, len_bytes);
  if (header_len > b.size() - start) fail(what, "the file ends inside its header (" + std::to_string(header_len) + " bytes declared)");
  const Header h = HeaderParser(b.substr(start, header_len), what).parse();
  const DType t = dtype_of(h.descr, what);
  uint64_t count = 1;
  for (int64_t d : h.shape) {
    if (d != 0 && count > (uint64_t{1} << 56) / static_cast<uint64_t>(d)) fail(what, "its shape " + shape_to_string(h.shape) + " is too large");
    count *= static_cast<uint64_t>(d);
  }
  if (h.fortran && h.shape.size() > 1)
    fail(what, "it is in Fortran order; save it in C order (np.save(path, np.ascontiguousarray(a)))");
  const std::string_view data = b.substr(start + header_len);
  if (data.size() != count * t.bytes)
    fail(what, "its shape " + shape_to_string(h.shape) + " of " + t.name + " needs " + std::to_string(count * t.bytes) +
                   " bytes of data, the file holds " + std::to_string(data.size()));
  NpyArray a;
  a.dtype = t.name;
  a.shape = h.shape;
  if (a.dtype == "float32") {
    a.floats.resize(count);
    if (count) std::memcpy(a.floats.data(), data.data(), count * 4);
    return a;
  }
  a.ints.resize(count);
  for (size_t i = 0; i < count; ++i) {
    const char* p = data.data() + i * t.bytes;
    if (t.bytes == 8) {
      int64_t v;
      std::memcpy(&v, p, 8);
      a.ints[i] = v;
    } else if (t.bytes == 4) {
      int32_t v;
      std::memcpy(&v, p, 4);
      a.ints[i] = v;
    } else {
      a.ints[i] = *p != 0;
    }
  }
  return a;
}

NpyArray read_npy(const std::string& path, const std::string& what, uint64_t max_bytes) {
  check_input_file(what, path);
  const auto size = std::filesystem::file_size(path);
  if (size > max_bytes)
    throw Error(ErrorCode::OutOfRange, what + " '" + path + "': " + std::to_string(size) + " bytes, more than the " +
                                           std::to_string(max_bytes) + " an input may hold");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::ParseError, what + " '" + path + "': cannot open the file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_npy(ss.str(), what + " '" + path + "'");
}

std::vector<float> npy_to_floats(const NpyArray& a, const std::string& what) {
  if (a.dtype == "float32") return a.floats;
  constexpr int64_t kExact = int64_t{1} << 24;
  std::vector<float> v(a.ints.size());
  for (size_t i = 0; i < a.ints.size(); ++i) {
    if (a.ints[i] > kExact || a.ints[i] < -kExact)
      throw Error(ErrorCode::InvalidArgument, what + ": value " + std::to_string(a.ints[i]) + " at index " + std::to_string(i) +
                                                  " cannot be held exactly by a float32 (|v| > 2^24), and rungs computes in float32");
    v[i] = static_cast<float>(a.ints[i]);
  }
  return v;
}

std::string npy_bytes(const Shape& shape, const std::vector<float>& data) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) dict += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? ", " : "");
  dict += "), }";
  const size_t total = 10 + dict.size() + 1;
  dict += std::string((64 - total % 64) % 64, ' ') + "\n";
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(dict.size() & 0xff);
  out += static_cast<char>(dict.size() >> 8);
  out += dict;
  out.append(reinterpret_cast<const char*>(data.data()), data.size() * sizeof(float));
  return out;
}

void write_npy(const std::string& path, const Shape& shape, const std::vector<float>& data) {
  std::ofstream f(path, std::ios::binary);
  const std::string bytes = npy_bytes(shape, data);
  if (!f || !f.write(bytes.data(), static_cast<std::streamsize>(bytes.size())))
    throw Error(ErrorCode::InvalidArgument, "run: cannot write '" + path + "'");
}

}  // namespace rungs::cli
