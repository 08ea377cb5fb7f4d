// SPDX-License-Identifier: Apache-2.0
// core/ir/tensor_view.cpp: TensorView (rungs/types.hpp), the typed inputs of the run APIs, and
// their exact conversion to f32.
#include <cmath>
#include <string>

#include "core/check.hpp"
#include "rungs/types.hpp"

namespace rungs {

namespace {
// The largest integer magnitude below which every integer is an f32: 2^24.
constexpr int64_t kExactF32 = int64_t{1} << 24;

template <class T>
void convert_ints(std::span<const T> v, std::vector<float>& out, std::string_view what) {
  out.resize(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const int64_t x = static_cast<int64_t>(v[i]);
    if (x > kExactF32 || x < -kExactF32)
      fail(ErrorCode::InvalidArgument,
           std::string(what) + " holds " + std::to_string(x) + " at index " + std::to_string(i) +
               ", which f32 cannot hold exactly (integers are exact only up to 2^24 = 16777216 in "
               "magnitude; rungs computes in f32)");
    out[i] = static_cast<float>(x);
  }
}
}  // namespace

std::string to_string(ElementType type) {
  switch (type) {
    case ElementType::F32: return "f32";
    case ElementType::I64: return "i64";
    case ElementType::I32: return "i32";
    case ElementType::Bool: return "bool";
  }
  return "?";
}

TensorView TensorView::bool_bytes(std::span<const uint8_t> bytes) {
  TensorView v;
  v.data_ = Bytes{bytes};
  return v;
}

ElementType TensorView::dtype() const {
  switch (data_.index()) {
    case 0: return ElementType::F32;
    case 1: return ElementType::I64;
    case 2: return ElementType::I32;
    default: return ElementType::Bool;
  }
}

size_t TensorView::size() const {
  return std::visit(
      [](const auto& d) {
        if constexpr (std::is_same_v<std::decay_t<decltype(d)>, Bytes>) return d.b.size();
        else return d.size();
      },
      data_);
}

std::span<const float> TensorView::f32() const {
  if (const auto* f = std::get_if<std::span<const float>>(&data_)) return *f;
  fail(ErrorCode::InvalidArgument, "TensorView::f32: the view holds " + to_string(dtype()) + " values, not f32");
}

std::span<const float> TensorView::to_f32(std::vector<float>& scratch, std::string_view what) const {
  if (const auto* f = std::get_if<std::span<const float>>(&data_)) return *f;
  if (const auto* i = std::get_if<std::span<const int64_t>>(&data_)) convert_ints(*i, scratch, what);
  else if (const auto* j = std::get_if<std::span<const int32_t>>(&data_)) convert_ints(*j, scratch, what);
  else {
    const auto& b = std::get<Bytes>(data_).b;
    scratch.resize(b.size());
    for (size_t k = 0; k < b.size(); ++k) scratch[k] = b[k] != 0 ? 1.f : 0.f;
  }
  return scratch;
}

}  // namespace rungs
