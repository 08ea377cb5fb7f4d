// SPDX-License-Identifier: Apache-2.0
// rungs/types.hpp: small value types shared by the graph builders, the compiler and the cache.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace rungs {

// Cpu: xsimd kernels, the best ISA at run time (native) or SIMD128 (wasm).
// Reference: plain scalar loops, the correctness oracle.
enum class Device { Cpu, Reference };

using Shape = std::vector<int64_t>;

// The element type a model file declares for an input or output. rungs computes in f32: integer
// and boolean values are converted exactly at the API boundary.
enum class ElementType { F32, I64, I32, Bool };

// Handle to a node of one Graph (or HirModule). Only meaningful with the builder that made it.
struct Value {
  uint32_t id;
};

enum class Activation { None, Relu, Gelu, GeluTanh, Silu, Tanh, Sigmoid };

struct AttentionOptions {
  int heads = 1;                  // q, k, v are [B, S, heads*head_dim]; k, v may have another S (Sk)
  bool causal = false;            // query i sees keys j <= i + (Sk - Sq)
  std::optional<Value> key_mask;  // [B, Sk] keep mask: >= 0.5 keeps the key, < 0.5 drops it
  std::optional<float> scale;     // default 1/sqrt(head_dim)
};

// Param values by name, as build functions hand them to the cache (ensure_*_with_params).
using ParamMap = std::map<std::string, std::vector<float>>;

// A read-only view of one input's values in the caller's element type: f32, int64, int32 or bool
// (ElementType). rungs computes in f32, so the run APIs convert every other type exactly at the
// boundary: an integer beyond +-2^24 (which f32 cannot hold exactly, e.g. a token id past
// 16,777,216) is Error(InvalidArgument) naming the input and the value, never a silent change;
// bool is 1 or 0. A float span, vector or array converts implicitly, so f32 callers write what
// they always did: NamedInput{"x", values}.
class TensorView {
 public:
  TensorView() = default;
  template <class R>
    requires(!std::is_same_v<std::remove_cvref_t<R>, TensorView> && std::is_convertible_v<R&&, std::span<const float>>)
  TensorView(R&& values) : data_(std::span<const float>(std::forward<R>(values))) {}
  template <class R>
    requires(!std::is_same_v<std::remove_cvref_t<R>, TensorView> && std::is_convertible_v<R&&, std::span<const int64_t>>)
  TensorView(R&& values) : data_(std::span<const int64_t>(std::forward<R>(values))) {}
  template <class R>
    requires(!std::is_same_v<std::remove_cvref_t<R>, TensorView> && std::is_convertible_v<R&&, std::span<const int32_t>>)
  TensorView(R&& values) : data_(std::span<const int32_t>(std::forward<R>(values))) {}
  template <class R>
    requires(!std::is_same_v<std::remove_cvref_t<R>, TensorView> && std::is_convertible_v<R&&, std::span<const bool>>)
  TensorView(R&& values) : data_(Bytes{bytes_of(std::span<const bool>(std::forward<R>(values)))}) {}
  // Booleans one byte each (0 false, anything else true), as JS's Uint8Array and numpy's bool.
  static TensorView bool_bytes(std::span<const uint8_t> bytes);

  ElementType dtype() const;
  size_t size() const;  // elements
  // The values as f32: the span itself for F32, else `scratch` filled exactly. `what` names the
  // input in the Error(InvalidArgument) an inexact integer throws ("run: input 'ids'").
  std::span<const float> to_f32(std::vector<float>& scratch, std::string_view what) const;
  // The values of an F32 view; Error(InvalidArgument) for another element type (use to_f32).
  std::span<const float> f32() const;
  // Span-like access to an F32 view (data was a std::span<const float> before the other element
  // types, and reads like one still): each is f32()'s, with its error for another element type.
  operator std::span<const float>() const { return f32(); }
  const float* data() const { return f32().data(); }
  const float& operator[](size_t i) const { return f32()[i]; }
  std::span<const float>::iterator begin() const { return f32().begin(); }
  std::span<const float>::iterator end() const { return f32().end(); }
  bool empty() const { return size() == 0; }

 private:
  struct Bytes {
    std::span<const uint8_t> b;
  };
  static std::span<const uint8_t> bytes_of(std::span<const bool> v) {
    return {reinterpret_cast<const uint8_t*>(v.data()), v.size()};
  }
  std::variant<std::span<const float>, std::span<const int64_t>, std::span<const int32_t>, Bytes> data_;
};

std::string to_string(Device device);
std::string to_string(Activation act);
std::string to_string(ElementType type);  // "f32", "i64", "i32", "bool"
std::string shape_to_string(const Shape& shape);  // "[2, 3]"
int64_t shape_numel(const Shape& shape);          // product of dims (1 for a scalar [])

}  // namespace rungs
