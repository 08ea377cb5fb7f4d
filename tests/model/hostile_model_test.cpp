// SPDX-License-Identifier: Apache-2.0
// Model files that describe hostile shapes (a dim of 2^40, products past int64, broadcasts past
// 2^40 elements) or weights files whose header claims huge sizes or offsets are refused with
// Error(ParseError) naming the file and the field, before anything of that size is attempted.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "rungs/rungs.hpp"
#include "test_util.hpp"

namespace {

using namespace rungs;
using rungs::testing::expect_error;

std::string model_json(const std::string& inputs, const std::string& blocks, const std::string& outputs) {
  return R"({"format": "rungs-model", "version": 1, "name": "h", "inputs": )" + inputs + R"(, "blocks": )" + blocks +
         R"(, "outputs": )" + outputs + "}";
}

// A safetensors file: the header's length (8 bytes, little-endian), the header, then data_bytes
// zeros. Sized once and filled in place (vector::insert of a string into 8 bytes set off GCC 12's
// -Wstringop-overread, a false positive).
std::vector<uint8_t> bytes(const std::string& header, size_t data_bytes = 0) {
  std::vector<uint8_t> out(8 + header.size() + data_bytes, 0);
  const uint64_t n = header.size();
  for (int k = 0; k < 8; ++k) out[k] = static_cast<uint8_t>(n >> (8 * k));
  std::copy(header.begin(), header.end(), out.begin() + 8);
  return out;
}

void load_fails(const std::string& json, const std::vector<uint8_t>& weights, const std::string& needle) {
  expect_error([&] { load_model_from_bytes(json, weights, "hostile"); }, ErrorCode::ParseError, needle);
}

TEST(HostileModel, DimsPastTheLimitAndProductsPastTwoTo40) {
  const std::string relu_out = R"([{"name": "x"}])";
  load_fails(model_json(R"([{"name": "x", "shape": [1099511627776]}])", "[]", relu_out),
             {}, "hostile.json: inputs[0].shape[0]: expected a positive integer <= 2147483647, got 1099511627776");
  load_fails(model_json(R"([{"name": "x", "shape": [9223372036854775807]}])", "[]", relu_out), {},
             "inputs[0].shape[0]: expected a positive integer <= 2147483647");
  // Each dim is allowed; their product overflows int64 and is refused on the way.
  load_fails(model_json(R"([{"name": "x", "shape": [2147483647, 2147483647, 2147483647]}])", "[]", relu_out), {},
             "hostile.json: input 'x': shape [2147483647, 2147483647, 2147483647] has more than 2^40 elements");
}

TEST(HostileModel, BlocksWhoseResultWouldPassTwoTo40) {
  // Two inputs of 2^30 values each broadcast to 2^60: refused naming the block.
  load_fails(model_json(R"([{"name": "a", "shape": [1073741824, 1]}, {"name": "b", "shape": [1, 1073741824]}])",
                        R"([{"op": "add", "inputs": ["a", "b"], "out": "s"}])", R"([{"name": "s"}])"),
             {}, "hostile.json: blocks[0]: add: shape [1073741824, 1073741824] has more than 2^40 elements");
  // A linear layer whose weight would be [2^30, 2^31 - 1].
  load_fails(model_json(R"([{"name": "x", "shape": [1, 1073741824]}])",
                        R"([{"op": "linear", "name": "fc", "input": "x", "out_features": 2147483647, "out": "y"}])",
                        R"([{"name": "y"}])"),
             {}, "hostile.json: blocks[0]: param 'fc.weight': shape [1073741824, 2147483647] has more than 2^40");
  // An embedding of a vocabulary of 2^31 - 1 rows of 2^31 - 1.
  load_fails(model_json(R"([{"name": "ids", "shape": [1, 4]}])",
                        R"([{"op": "embedding", "name": "e", "input": "ids", "vocab": 2147483647, "dim": 2147483647, "out": "y"}])",
                        R"([{"name": "y"}])"),
             {}, "param 'e.table': shape [2147483647, 2147483647] has more than 2^40");
}

TEST(HostileModel, WeightsHeadersClaimingHugeSizes) {
  const std::string json = model_json(R"([{"name": "x", "shape": [2, 3]}])",
                                      R"([{"op": "linear", "name": "l", "input": "x", "out_features": 2, "bias": false, "out": "y"}])",
                                      R"([{"name": "y"}])");
  // A header length of 2^62: refused on the length, nothing read or allocated for it.
  std::vector<uint8_t> huge_len(16, 0);
  huge_len[7] = 0x40;
  load_fails(json, huge_len, "hostile.safetensors: header length 4611686018427387904 exceeds the limit of 104857600 bytes");
  // A shape of 2^40 x 2^40 and offsets up to 2^62, in a file of a few bytes.
  load_fails(json, bytes(R"({"l.weight": {"dtype": "F32", "shape": [1099511627776, 1099511627776], "data_offsets": [0, 24]}})", 24),
             "hostile.safetensors: tensor 'l.weight': shape [1099511627776, 1099511627776] of F32 needs more than the whole data section");
  load_fails(json, bytes(R"({"l.weight": {"dtype": "F32", "shape": [3, 2], "data_offsets": [0, 4611686018427387904]}})", 24),
             "tensor 'l.weight'.data_offsets: [0, 4611686018427387904) is outside the data section [0, 24)");
  load_fails(json, bytes(R"({"l.weight": {"dtype": "F32", "shape": [3, 2], "data_offsets": [0, 18446744073709551615]}})", 24),
             "tensor 'l.weight'.data_offsets: expected [begin, end], two non-negative integers");
  // The same file with honest sizes loads.
  std::vector<uint8_t> ok = bytes(R"({"l.weight": {"dtype": "F32", "shape": [3, 2], "data_offsets": [0, 24]}})", 24);
  EXPECT_EQ(load_model_from_bytes(json, ok, "hostile").weights().at("l.weight").size(), 6u);
}

}  // namespace
