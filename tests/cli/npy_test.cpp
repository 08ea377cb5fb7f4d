// SPDX-License-Identifier: Apache-2.0
// native_cli/npy: the .npy reader and writer of `rungs run`, against files numpy wrote
// (tests/cli/npy/, made by numpy 1.24: np.save and np.lib.format.write_array).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "native_cli/npy.hpp"
#include "rungs/error.hpp"

namespace {

using rungs::cli::npy_bytes;
using rungs::cli::npy_to_floats;
using rungs::cli::parse_npy;
using rungs::cli::read_npy;

const std::string kDir = std::string(RUNGS_SOURCE_DIR) + "/tests/cli/npy/";

std::string bytes_of(const std::string& name) {
  std::ifstream f(kDir + name, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The message of the rungs::Error `f` throws ("" if it throws none).
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const rungs::Error& e) {
    return e.what();
  }
  return "";
}

TEST(Npy, ReadsWhatNumpyWrites) {
  auto a = read_npy(kDir + "int64_1x5.npy", "input 'ids'", 1 << 20);
  EXPECT_EQ(a.dtype, "int64");
  EXPECT_EQ(a.shape, (rungs::Shape{1, 5}));
  EXPECT_EQ(a.ints, (std::vector<int64_t>{101, 7, 0, 999, 16777216}));
  auto b = read_npy(kDir + "int32_1x5.npy", "x", 1 << 20);
  EXPECT_EQ(b.dtype, "int32");
  EXPECT_EQ(b.ints, (std::vector<int64_t>{101, 7, 0, 999, -3}));
  auto c = read_npy(kDir + "bool_1x5.npy", "x", 1 << 20);
  EXPECT_EQ(c.dtype, "bool");
  EXPECT_EQ(c.ints, (std::vector<int64_t>{1, 1, 0, 1, 0}));
  auto d = read_npy(kDir + "float32_2x3.npy", "x", 1 << 20);
  EXPECT_EQ(d.dtype, "float32");
  EXPECT_EQ(d.shape, (rungs::Shape{2, 3}));
  EXPECT_EQ(d.floats, (std::vector<float>{0.5f, -1.25f, 3.f, 1e-3f, 2.f, -7.f}));
  auto v2 = read_npy(kDir + "int32_v2.npy", "x", 1 << 20);  // format 2.0: a 4-byte header length
  EXPECT_EQ(v2.shape, (rungs::Shape{3}));
  EXPECT_EQ(v2.ints, (std::vector<int64_t>{4, 5, 6}));
}

TEST(Npy, IntegersBecomeFloatsExactlyOrAnError) {
  auto a = read_npy(kDir + "int64_1x5.npy", "x", 1 << 20);
  EXPECT_EQ(npy_to_floats(a, "input 'ids'"), (std::vector<float>{101, 7, 0, 999, 16777216}));  // 2^24 is exact
  auto big = read_npy(kDir + "int64_too_large.npy", "x", 1 << 20);
  EXPECT_EQ(error_of([&] { npy_to_floats(big, "input 'input_ids'"); }),
            "input 'input_ids': value 16777217 at index 1 cannot be held exactly by a float32 (|v| > 2^24), and rungs "
            "computes in float32");
}

TEST(Npy, RefusesWhatItDoesNotReadByName) {
  const std::string tail = "; rungs reads int64 ('<i8'), int32 ('<i4'), bool ('|b1') and float32 ('<f4'): convert it";
  EXPECT_NE(error_of([] { read_npy(kDir + "float64_2x3.npy", "input 'x'", 1 << 20); })
                .find("input 'x' '" + kDir + "float64_2x3.npy': not a .npy file rungs reads: it holds '<f8' (float64)" + tail),
            std::string::npos);
  EXPECT_NE(error_of([] { read_npy(kDir + "int64_big_endian.npy", "x", 1 << 20); }).find("it holds '>i8' (big-endian)" + tail),
            std::string::npos);
  EXPECT_NE(error_of([] { read_npy(kDir + "float32_fortran.npy", "x", 1 << 20); })
                .find("it is in Fortran order; save it in C order"),
            std::string::npos);
  const std::string good = bytes_of("int64_1x5.npy");
  EXPECT_EQ(error_of([&] { parse_npy(good.substr(0, good.size() - 3), "f"); }),
            "f: not a .npy file rungs reads: its shape [1, 5] of int64 needs 40 bytes of data, the file holds 37");
  EXPECT_EQ(error_of([&] { parse_npy(good.substr(0, 40), "f"); }),
            "f: not a .npy file rungs reads: the file ends inside its header (118 bytes declared)");
  EXPECT_EQ(error_of([] { parse_npy("hello world, not numpy", "f"); }),
            "f: not a .npy file rungs reads: it does not start with \\x93NUMPY");
  std::string v9 = good;
  v9[6] = 9;
  EXPECT_EQ(error_of([&] { parse_npy(v9, "f"); }), "f: not a .npy file rungs reads: format version 9 (rungs reads 1.0, 2.0 and 3.0)");
  std::string odd = good;
  odd.replace(odd.find("'shape'"), 7, "'shap3'");
  EXPECT_EQ(error_of([&] { parse_npy(odd, "f"); }), "f: not a .npy file rungs reads: header unknown header key 'shap3'");
  EXPECT_EQ(error_of([] { parse_npy(npy_bytes({int64_t{1} << 40, int64_t{1} << 40}, {}), "f"); }),
            "f: not a .npy file rungs reads: its shape [1099511627776, 1099511627776] is too large");
  EXPECT_NE(error_of([] { read_npy(kDir + "int64_1x5.npy", "input 'ids'", 100); }).find("168 bytes, more than the 100"),
            std::string::npos);
}

TEST(Npy, WritesWhatItReadsBackAndNumpyHeaders) {
  const std::vector<float> v = {1.5f, -2.f, 0.f, 3.25f, 7.f, -0.5f};
  const std::string bytes = npy_bytes({2, 3}, v);
  EXPECT_EQ((bytes.size() - v.size() * 4) % 64, 0u) << "the header is padded to 64 bytes, as numpy does";
  EXPECT_EQ(bytes, bytes_of("float32_2x3.npy").substr(0, 128) + std::string(reinterpret_cast<const char*>(v.data()), 24))
      << "the same header bytes numpy writes";
  auto a = parse_npy(bytes, "round trip");
  EXPECT_EQ(a.shape, (rungs::Shape{2, 3}));
  EXPECT_EQ(a.floats, v);
  auto one = parse_npy(npy_bytes({4}, {1, 2, 3, 4}), "1-d");  // (4,) needs its comma
  EXPECT_EQ(one.shape, (rungs::Shape{4}));
  auto scalar = parse_npy(npy_bytes({}, {9}), "0-d");
  EXPECT_TRUE(scalar.shape.empty());
  EXPECT_EQ(scalar.floats, (std::vector<float>{9}));
}

}  // namespace
