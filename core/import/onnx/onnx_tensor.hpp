// SPDX-License-Identifier: Apache-2.0
// core/import/onnx/onnx_tensor.hpp: constant tensors of the ONNX frontend.
//
// The frontend folds shape arithmetic itself (docs/onnx.md), on small constant tensors held as
// doubles (exact for every int64 a shape holds, every f32, f16 and bf16) with their element kind.
// Weights never pass through here as doubles: they are decoded straight to f32.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "rungs/types.hpp"

namespace rungs::onnx_import {

enum class Kind { Float, Int, Bool };

constexpr int64_t kMaxDim = (int64_t{1} << 31) - 1;  // any dim and any tensor's element count
constexpr size_t kMaxRank = 8;
constexpr int64_t kMaxFoldElements = int64_t{1} << 22;  // a tensor the frontend itself computes

struct Tensor {
  Kind kind = Kind::Float;
  Shape shape;
  std::vector<double> v;  // row-major, shape_numel(shape) values
};

// ONNX TensorProto.DataType values the frontend knows.
enum DataType : int {
  kFloat = 1, kUint8 = 2, kInt8 = 3, kInt32 = 6, kInt64 = 7, kString = 8, kBool = 9,
  kFloat16 = 10, kDouble = 11, kBfloat16 = 16
};
std::string data_type_name(int type);  // "FLOAT", "INT64", ..., "type 13"
bool supported_type(int type);
Kind kind_of(int type);                 // the kind of a supported type

// Checks a shape from a file: rank, each dim in [0, kMaxDim], the element count <= kMaxDim.
// Throws Error(ParseError) "<what>: <problem>".
void check_shape(const Shape& shape, const std::string& what);

// The int64 a folded value stands for: rounded toward zero and saturated at the int64 range, so
// a file's INT64_MAX (Slice's "to the end"), which is 2^63 once held as a double, stays
// INT64_MAX rather than overflowing the conversion. NaN stands for no integer: nullopt.
std::optional<int64_t> to_int64(double d);

float half_to_float(uint16_t bits);
float bf16_to_float(uint16_t bits);

// numpy broadcasting of two shapes; throws Error(ShapeMismatch) naming `what`.
Shape broadcast(const Shape& a, const Shape& b, const std::string& what);
// The flat index into a tensor of shape `in` broadcast to `out` for each flat index of `out`.
std::vector<size_t> broadcast_index(const Shape& in, const Shape& out);

}  // namespace rungs::onnx_import
