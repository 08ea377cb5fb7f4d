// SPDX-License-Identifier: Apache-2.0
// Safetensors reader and writer: byte layout against hand-made files, round trips in every dtype,
// and every kind of malformed input giving Error(ParseError) with a useful message (never a crash).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/model/safetensors.hpp"
#include "core/numeric/half.hpp"
#include "rungs/error.hpp"

namespace rungs {
namespace {

using safetensors::Tensor;

// A file made by hand from a header text and raw data bytes (independent of the writer).
std::vector<uint8_t> make_file(const std::string& header, const std::vector<uint8_t>& data) {
  std::vector<uint8_t> out;
  const uint64_t n = header.size();
  for (int k = 0; k < 8; ++k) out.push_back(static_cast<uint8_t>(n >> (8 * k)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

std::vector<uint8_t> f32_bytes(std::vector<float> v) {
  std::vector<uint8_t> out;
  for (float f : v) {
    uint32_t u = numeric::float_bits(f);
    for (int k = 0; k < 4; ++k) out.push_back(static_cast<uint8_t>(u >> (8 * k)));
  }
  return out;
}

// Runs read() and returns the ParseError message; fails the test on success or another error.
std::string parse_error(const std::vector<uint8_t>& bytes, const std::string& source = "w.safetensors") {
  try {
    safetensors::read(bytes, source);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::ParseError) << e.what();
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a rungs::Error: " << e.what();
    return {};
  }
  ADD_FAILURE() << "no error";
  return {};
}

std::vector<float> random_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-3.f, 3.f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// ---------------------------------------------------------------- correctness

TEST(Safetensors, ReadsHandMadeFileInEveryDtype) {
  // 1.0 and -2.0 in each format: F32 0x3f800000 / 0xc0000000, BF16 0x3f80 / 0xc000, F16 0x3c00 / 0xc000.
  std::vector<uint8_t> data = f32_bytes({1.0f, -2.0f});
  data.insert(data.end(), {0x80, 0x3f, 0x00, 0xc0});  // bf16, little-endian
  data.insert(data.end(), {0x00, 0x3c, 0x00, 0xc0});  // f16
  const std::string header =
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("b":{"dtype":"BF16","shape":[1,2],"data_offsets":[8,12]},)"
      R"("c":{"dtype":"F16","shape":[2,1],"data_offsets":[12,16]},"__metadata__":{"format":"pt"}})";
  const auto file = safetensors::read(make_file(header, data), "hand");
  ASSERT_EQ(file.tensors.size(), 3u);
  for (const char* name : {"a", "b", "c"}) {
    const Tensor* t = file.find(name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(t->data, (std::vector<float>{1.0f, -2.0f})) << name;
  }
  EXPECT_EQ(file.find("a")->dtype, TensorDType::F32);
  EXPECT_EQ(file.find("b")->dtype, TensorDType::BF16);
  EXPECT_EQ(file.find("c")->dtype, TensorDType::F16);
  EXPECT_EQ(file.find("b")->shape, (Shape{1, 2}));
  EXPECT_EQ(file.metadata.at("format"), "pt");
}

TEST(Safetensors, WriterLayoutMatchesTheFormat) {
  const std::vector<Tensor> ts = {{"w", TensorDType::F32, {2}, {1.0f, -2.0f}}, {"h", TensorDType::F16, {1}, {1.0f}}};
  const auto bytes = safetensors::write(ts, {{"k", "v"}});
  uint64_t n = 0;
  for (int k = 7; k >= 0; --k) n = (n << 8) | bytes[k];
  EXPECT_EQ((8 + n) % 8, 0u) << "data should start 8-byte aligned";
  ASSERT_EQ(bytes.size(), 8 + n + 8 + 2);
  const std::vector<uint8_t> data(bytes.begin() + 8 + static_cast<long>(n), bytes.end());
  EXPECT_EQ(data, (std::vector<uint8_t>{0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0, 0x00, 0x3c}));
  const std::string header(bytes.begin() + 8, bytes.begin() + 8 + static_cast<long>(n));
  EXPECT_NE(header.find(R"("w":{"data_offsets":[0,8],"dtype":"F32","shape":[2]})"), std::string::npos) << header;
  EXPECT_NE(header.find(R"("h":{"data_offsets":[8,10],"dtype":"F16","shape":[1]})"), std::string::npos) << header;
}

TEST(Safetensors, RoundTripF32IsExact) {
  const auto v = random_values(6 * 7, 1);
  const std::vector<Tensor> ts = {{"x", TensorDType::F32, {6, 7}, v}, {"empty", TensorDType::F32, {0, 3}, {}},
                                  {"scalar", TensorDType::F32, {}, {42.5f}}};
  const auto file = safetensors::read(safetensors::write(ts), "rt");
  EXPECT_EQ(file.find("x")->data, v);
  EXPECT_EQ(file.find("x")->shape, (Shape{6, 7}));
  EXPECT_TRUE(file.find("empty")->data.empty());
  EXPECT_EQ(file.find("empty")->shape, (Shape{0, 3}));
  EXPECT_EQ(file.find("scalar")->data, (std::vector<float>{42.5f}));
}

TEST(Safetensors, RoundTripHalfFormatsRoundOnce) {
  auto v = random_values(257, 2);
  v.push_back(1.0f);
  v.push_back(-0.0f);
  v.push_back(65504.0f);  // largest f16
  for (TensorDType dt : {TensorDType::BF16, TensorDType::F16}) {
    const std::vector<Tensor> ts = {{"x", dt, {static_cast<int64_t>(v.size())}, v}};
    const auto bytes = safetensors::write(ts);
    const auto got = safetensors::read(bytes, "rt").find("x")->data;
    ASSERT_EQ(got.size(), v.size());
    const float tol = dt == TensorDType::BF16 ? 1.f / 256 : 1.f / 2048;  // half an ulp, relative
    for (size_t i = 0; i < v.size(); ++i) {
      const float want = dt == TensorDType::BF16 ? numeric::bf16_to_f32(numeric::f32_to_bf16(v[i]))
                                                 : numeric::f16_to_f32(numeric::f32_to_f16(v[i]));
      EXPECT_EQ(got[i], want) << i;
      EXPECT_LE(std::fabs(got[i] - v[i]), tol * std::fabs(v[i])) << i;
    }
    // Writing the rounded values again gives the same bytes: stored values are stable.
    const std::vector<Tensor> again = {{"x", dt, {static_cast<int64_t>(v.size())}, got}};
    EXPECT_EQ(safetensors::write(again), bytes);
  }
}

TEST(Safetensors, WriterRefusesBadTensors) {
  auto code = [](std::vector<Tensor> ts) {
    try {
      safetensors::write(ts);
    } catch (const Error& e) {
      return e.code();
    }
    return ErrorCode::Internal;
  };
  EXPECT_EQ(code({{"a", TensorDType::F32, {2, 2}, {1, 2, 3}}}), ErrorCode::InvalidArgument);
  EXPECT_EQ(code({{"a", TensorDType::F32, {1}, {1}}, {"a", TensorDType::F32, {1}, {2}}}), ErrorCode::InvalidArgument);
  EXPECT_EQ(code({{"", TensorDType::F32, {1}, {1}}}), ErrorCode::InvalidArgument);
  EXPECT_EQ(code({{"__metadata__", TensorDType::F32, {1}, {1}}}), ErrorCode::InvalidArgument);
}

// ---------------------------------------------------------------- errors

const std::string kGoodHeader = R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})";

TEST(SafetensorsErrors, TruncatedAtEveryLength) {
  const auto good = make_file(kGoodHeader, f32_bytes({1, 2, 3, 4}));
  ASSERT_NO_THROW(safetensors::read(good, "good"));
  for (size_t len = 0; len < good.size(); ++len) {
    const std::vector<uint8_t> cut(good.begin(), good.begin() + static_cast<long>(len));
    const std::string msg = parse_error(cut, "cut.safetensors");
    EXPECT_NE(msg.find("cut.safetensors"), std::string::npos) << msg;
  }
  EXPECT_NE(parse_error({1, 2, 3}).find("8-byte header length"), std::string::npos);
  const auto cut = std::vector<uint8_t>(good.begin(), good.end() - 3);
  const std::string msg = parse_error(cut);
  EXPECT_NE(msg.find("'w'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[0, 16) is outside the data section [0, 13)"), std::string::npos) << msg;
}

TEST(SafetensorsErrors, HeaderLengthPastTheEnd) {
  auto bytes = make_file(kGoodHeader, f32_bytes({1, 2, 3, 4}));
  bytes[0] = 0xff;  // ~ 2^8 more header bytes than exist
  bytes[1] = 0x01;
  EXPECT_NE(parse_error(bytes).find("only"), std::string::npos);
  for (int k = 0; k < 8; ++k) bytes[k] = 0xff;  // 2^64 - 1
  EXPECT_NE(parse_error(bytes).find("exceeds the limit"), std::string::npos);
}

TEST(SafetensorsErrors, BadJson) {
  EXPECT_NE(parse_error(make_file("{\"w\": [1, 2", {})).find("invalid JSON"), std::string::npos);
  EXPECT_NE(parse_error(make_file("[1, 2]", {})).find("expected a JSON object"), std::string::npos);
  EXPECT_NE(parse_error(make_file("", {})).find("header"), std::string::npos);
  EXPECT_NE(parse_error(make_file("{\"w\": 3}", {})).find("tensor 'w': expected an object"), std::string::npos);
  // A duplicate tensor name would silently drop one tensor.
  const std::string dup = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                          R"("w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
  EXPECT_NE(parse_error(make_file(dup, f32_bytes({1, 2}))).find("duplicate key \"w\""), std::string::npos);
  // Invalid UTF-8 inside a string.
  EXPECT_NE(parse_error(make_file("{\"\xff\":1}", {})).find("invalid JSON"), std::string::npos);
  EXPECT_NE(parse_error(make_file(R"({"__metadata__":{"a":1}})", {})).find("__metadata__.a: expected a string"),
            std::string::npos);
}

TEST(SafetensorsErrors, DeepNestingIsRefusedWithoutExhaustingTheStack) {
  const std::string deep = "{\"w\":" + std::string(200000, '[') + std::string(200000, ']') + "}";
  EXPECT_NE(parse_error(make_file(deep, {})).find("tensor 'w': expected an object, got array"), std::string::npos);
}

TEST(SafetensorsErrors, WrongDtype) {
  for (const char* dt : {"F64", "I32", "f32", "BOOL", ""}) {
    const std::string h = std::string(R"({"w":{"dtype":")") + dt + R"(","shape":[1],"data_offsets":[0,4]}})";
    const std::string msg = parse_error(make_file(h, f32_bytes({1})));
    EXPECT_NE(msg.find("tensor 'w'.dtype: unsupported dtype"), std::string::npos) << msg;
    EXPECT_NE(msg.find("expected \"F32\", \"BF16\" or \"F16\""), std::string::npos) << msg;
  }
  const std::string msg = parse_error(make_file(R"({"w":{"dtype":4,"shape":[1],"data_offsets":[0,4]}})", f32_bytes({1})));
  EXPECT_NE(msg.find("expected a string"), std::string::npos) << msg;
}

TEST(SafetensorsErrors, ShapeNotMatchingOffsets) {
  const std::string h = R"({"w":{"dtype":"F32","shape":[3,2],"data_offsets":[0,16]}})";
  const std::string msg = parse_error(make_file(h, f32_bytes({1, 2, 3, 4})));
  EXPECT_NE(msg.find("w.safetensors: tensor 'w': shape [3, 2] of F32 needs 24 bytes"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[0, 16) hold 16"), std::string::npos) << msg;
  // BF16 is 2 bytes a value: [2, 2] needs 8, not 16.
  const std::string h2 = R"({"w":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,16]}})";
  EXPECT_NE(parse_error(make_file(h2, f32_bytes({1, 2, 3, 4}))).find("needs 8 bytes"), std::string::npos);
}

TEST(SafetensorsErrors, OffsetsOutOfRangeOverlappingOrLeavingHoles) {
  const auto data = f32_bytes({1, 2, 3, 4});
  auto h = [](const std::string& a, const std::string& b) {
    return R"({"a":{"dtype":"F32","shape":[2],"data_offsets":)" + a + R"(},"b":{"dtype":"F32","shape":[2],"data_offsets":)" +
           b + "}}";
  };
  EXPECT_NE(parse_error(make_file(h("[0,8]", "[4,12]"), data)).find("tensors 'a' [0, 8) and 'b' [4, 12) overlap"),
            std::string::npos);
  EXPECT_NE(parse_error(make_file(h("[0,8]", "[8,16]"), f32_bytes({1, 2, 3, 4, 5}))).find("after the last tensor"),
            std::string::npos);
  EXPECT_NE(parse_error(make_file(h("[4,12]", "[12,20]"), f32_bytes({1, 2, 3, 4, 5}))).find("belong to no tensor"),
            std::string::npos);
  EXPECT_NE(parse_error(make_file(h("[0,8]", "[8,24]"), data)).find("outside the data section [0, 16)"),
            std::string::npos);
  EXPECT_NE(parse_error(make_file(h("[8,0]", "[8,16]"), data)).find("'a'.data_offsets"), std::string::npos);
  EXPECT_NE(parse_error(make_file(h("[0,-8]", "[8,16]"), data)).find("two non-negative integers"), std::string::npos);
  EXPECT_NE(parse_error(make_file(h("[0,8,9]", "[8,16]"), data)).find("[begin, end]"), std::string::npos);
  EXPECT_NE(parse_error(make_file(h("[0,1e3]", "[8,16]"), data)).find("[begin, end]"), std::string::npos);
  EXPECT_NE(parse_error(make_file(h("[0,18446744073709551615]", "[8,16]"), data)).find("[begin, end]"),
            std::string::npos);
}

TEST(SafetensorsErrors, HugeNegativeAndNonIntegerDims) {
  const auto data = f32_bytes({1, 2, 3, 4});
  auto h = [](const std::string& shape) {
    return R"({"w":{"dtype":"F32","shape":)" + shape + R"(,"data_offsets":[0,16]}})";
  };
  // The product of these overflows 64 bits; it must be refused, not wrapped around to 4.
  const std::string overflow = "[1099511627776,1099511627776,1099511627776,4]";
  std::string msg = parse_error(make_file(h(overflow), data));
  EXPECT_NE(msg.find("more than the whole data section"), std::string::npos) << msg;
  // 2^32 * 2^32 = 2^64 wraps to 0 in 64 bits: still refused.
  msg = parse_error(make_file(h("[4294967296,4294967296]"), {}));
  EXPECT_NE(msg.find("tensor 'w'"), std::string::npos) << msg;
  for (const char* s : {"[-1,4]", "[2.5]", "[\"4\"]", "[null]", "[2199023255553]", "[9223372036854775808]"}) {
    msg = parse_error(make_file(h(s), data));
    EXPECT_NE(msg.find("tensor 'w'.shape["), std::string::npos) << s << ": " << msg;
  }
  msg = parse_error(make_file(h("[1,1,1,1,1,1,1,1,4]"), data));
  EXPECT_NE(msg.find("rank 9 exceeds"), std::string::npos) << msg;
  EXPECT_NE(parse_error(make_file(h("4"), data)).find("expected an array"), std::string::npos);
}

TEST(SafetensorsErrors, MissingAndUnknownFields) {
  EXPECT_NE(parse_error(make_file(R"({"w":{"shape":[1],"data_offsets":[0,4]}})", f32_bytes({1})))
                .find("tensor 'w': missing field 'dtype'"),
            std::string::npos);
  EXPECT_NE(parse_error(make_file(R"({"w":{"dtype":"F32","data_offsets":[0,4]}})", f32_bytes({1})))
                .find("missing field 'shape'"),
            std::string::npos);
  EXPECT_NE(parse_error(make_file(R"({"w":{"dtype":"F32","shape":[1]}})", f32_bytes({1})))
                .find("missing field 'data_offsets'"),
            std::string::npos);
  EXPECT_NE(parse_error(make_file(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1}})", f32_bytes({1})))
                .find("unknown field 'x'"),
            std::string::npos);
}

TEST(SafetensorsErrors, GarbageNeverCrashes) {
  size_t parsed = 0;
  for (uint32_t seed = 0; seed < 2000; ++seed) {
    std::mt19937 rng(seed);
    std::vector<uint8_t> bytes(rng() % 96);
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    if (seed % 2 == 0 && bytes.size() >= 8) {  // a plausible header length, so the JSON parser runs
      const uint64_t n = rng() % (bytes.size() - 7);
      for (int k = 0; k < 8; ++k) bytes[k] = static_cast<uint8_t>(n >> (8 * k));
      if (n > 0) bytes[8] = '{';
    }
    try {
      safetensors::read(bytes, "garbage");
      ++parsed;
    } catch (const Error& e) {
      ASSERT_EQ(e.code(), ErrorCode::ParseError) << "seed " << seed << ": " << e.what();
    }
  }
  EXPECT_LT(parsed, 20u);  // random bytes are practically never a valid file
}

TEST(SafetensorsErrors, MutatedValidFilesNeverCrash) {
  const std::vector<Tensor> ts = {{"a.weight", TensorDType::F32, {3, 2}, random_values(6, 3)},
                                  {"a.bias", TensorDType::BF16, {2}, {0.5f, -1}},
                                  {"t", TensorDType::F16, {2, 1}, {2, 3}}};
  const auto good = safetensors::write(ts, {{"m", "x"}});
  size_t still_valid = 0, refused = 0;
  for (uint32_t seed = 0; seed < 3000; ++seed) {
    std::mt19937 rng(seed);
    auto bytes = good;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % bytes.size();
      switch (rng() % 4) {
        case 0: bytes[at] = static_cast<uint8_t>(rng()); break;                    // overwrite
        case 1: bytes[at] ^= static_cast<uint8_t>(1u << (rng() % 8)); break;       // bit flip
        case 2: bytes.erase(bytes.begin() + static_cast<long>(at)); break;         // delete
        default: bytes.insert(bytes.begin() + static_cast<long>(at), '9'); break;  // insert a digit
      }
      if (bytes.empty()) bytes.push_back(0);
    }
    try {
      const auto f = safetensors::read(bytes, "mutated");
      for (const auto& t : f.tensors) ASSERT_EQ(static_cast<int64_t>(t.data.size()), shape_numel(t.shape));
      ++still_valid;
    } catch (const Error& e) {
      ASSERT_EQ(e.code(), ErrorCode::ParseError) << "seed " << seed << ": " << e.what();
      ++refused;
    }
  }
  EXPECT_GT(refused, 1000u);
  EXPECT_GT(still_valid, 0u);  // data-byte edits leave a valid file: the fuzzer reaches past the header
}

TEST(SafetensorsErrors, ReadFileNamesThePath) {
  try {
    safetensors::read_file("/nonexistent/dir/w.safetensors");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::ParseError);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/w.safetensors: cannot open"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rungs
