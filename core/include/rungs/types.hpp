// SPDX-License-Identifier: Apache-2.0
// rungs/types.hpp: small value types shared by the graph builders, the compiler and the cache.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
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

std::string to_string(Device device);
std::string to_string(Activation act);
std::string shape_to_string(const Shape& shape);  // "[2, 3]"
int64_t shape_numel(const Shape& shape);          // product of dims (1 for a scalar [])

}  // namespace rungs
