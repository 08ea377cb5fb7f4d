// SPDX-License-Identifier: Apache-2.0
// core/import/onnx/onnx_tensor.cpp: element types, shape checks and broadcasting for constants.
#include "core/import/onnx/onnx_tensor.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "core/check.hpp"
#include "core/numeric/half.hpp"

namespace rungs::onnx_import {

std::string data_type_name(int type) {
  switch (type) {
    case kFloat: return "FLOAT";
    case kUint8: return "UINT8";
    case kInt8: return "INT8";
    case kInt32: return "INT32";
    case kInt64: return "INT64";
    case kString: return "STRING";
    case kBool: return "BOOL";
    case kFloat16: return "FLOAT16";
    case kDouble: return "DOUBLE";
    case kBfloat16: return "BFLOAT16";
    default: return "type " + std::to_string(type);
  }
}

bool supported_type(int type) {
  switch (type) {
    case kFloat: case kUint8: case kInt8: case kInt32: case kInt64: case kBool:
    case kFloat16: case kDouble: case kBfloat16:
      return true;
    default:
      return false;
  }
}

Kind kind_of(int type) {
  switch (type) {
    case kBool: return Kind::Bool;
    case kUint8: case kInt8: case kInt32: case kInt64: return Kind::Int;
    default: return Kind::Float;
  }
}

void check_shape(const Shape& shape, const std::string& what) {
  if (shape.size() > kMaxRank) {
    fail(ErrorCode::ParseError, what + ": rank " + std::to_string(shape.size()) + " is past the limit of " +
                                    std::to_string(kMaxRank));
  }
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || d > kMaxDim) {
      fail(ErrorCode::ParseError, what + ": dim " + std::to_string(d) + " in " + shape_to_string(shape) +
                                      " is outside [0, " + std::to_string(kMaxDim) + "]");
    }
    if (d != 0 && n > kMaxDim / d) {
      fail(ErrorCode::ParseError, what + ": shape " + shape_to_string(shape) + " holds more than " +
                                      std::to_string(kMaxDim) + " values, past the limit");
    }
    n *= d;
  }
}

std::optional<int64_t> to_int64(double d) {
  constexpr double kTwo63 = 9223372036854775808.0;  // 2^63, exact as a double
  if (std::isnan(d)) return std::nullopt;
  if (d >= kTwo63) return std::numeric_limits<int64_t>::max();
  if (d < -kTwo63) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(d);
}

float half_to_float(uint16_t bits) { return numeric::f16_to_f32(bits); }
float bf16_to_float(uint16_t bits) { return numeric::bf16_to_f32(bits); }

Shape broadcast(const Shape& a, const Shape& b, const std::string& what) {
  const size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1) {
      fail(ErrorCode::ShapeMismatch, what + ": shapes " + shape_to_string(a) + " and " + shape_to_string(b) +
                                         " do not broadcast");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<size_t> broadcast_index(const Shape& in, const Shape& out) {
  const size_t r = out.size(), off = r - in.size();
  std::vector<size_t> stride(r, 0);
  size_t s = 1;
  for (size_t i = in.size(); i-- > 0;) {
    stride[i + off] = in[i] == 1 ? 0 : s;
    s *= static_cast<size_t>(in[i]);
  }
  const auto n = static_cast<size_t>(shape_numel(out));
  std::vector<size_t> idx(n);
  std::vector<int64_t> pos(r, 0);
  size_t flat = 0;
  for (size_t k = 0; k < n; ++k) {
    idx[k] = flat;
    for (size_t d = r; d-- > 0;) {
      if (++pos[d] < out[d]) {
        flat += stride[d];
        break;
      }
      flat -= stride[d] * static_cast<size_t>(pos[d] - 1);
      pos[d] = 0;
    }
  }
  return idx;
}

}  // namespace rungs::onnx_import
