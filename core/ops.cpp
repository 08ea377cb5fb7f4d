// SPDX-License-Identifier: Apache-2.0
#include "core/ops.hpp"

#include <array>

namespace rungs::ops {

namespace {
constexpr std::array<OpInfo, static_cast<size_t>(Op::FusedAddNorm) + 1> kOps = {{
    {"input", OpClass::Leaf},
    {"param", OpClass::Leaf},
    {"constant", OpClass::Leaf},
    {"matmul", OpClass::Other},
    {"add", OpClass::Binary},
    {"sub", OpClass::Binary},
    {"mul", OpClass::Binary},
    {"div", OpClass::Binary},
    {"maximum", OpClass::Binary},
    {"minimum", OpClass::Binary},
    {"pow", OpClass::Binary},
    {"equal", OpClass::Binary},
    {"less", OpClass::Binary},
    {"greater", OpClass::Binary},
    {"less_equal", OpClass::Binary},
    {"greater_equal", OpClass::Binary},
    {"relu", OpClass::Unary},
    {"gelu", OpClass::Unary},
    {"gelu_tanh", OpClass::Unary},
    {"silu", OpClass::Unary},
    {"sigmoid", OpClass::Unary},
    {"tanh", OpClass::Unary},
    {"exp", OpClass::Unary},
    {"log", OpClass::Unary},
    {"sqrt", OpClass::Unary},
    {"rsqrt", OpClass::Unary},
    {"neg", OpClass::Unary},
    {"abs", OpClass::Unary},
    {"erf", OpClass::Unary},
    {"sin", OpClass::Unary},
    {"cos", OpClass::Unary},
    {"logical_not", OpClass::Unary},
    {"where", OpClass::Ternary},
    {"softmax", OpClass::Other},
    {"layer_norm", OpClass::Other},
    {"rms_norm", OpClass::Other},
    {"sum", OpClass::Other},
    {"mean", OpClass::Other},
    {"max", OpClass::Other},
    {"reshape", OpClass::Other},
    {"transpose", OpClass::Other},
    {"slice", OpClass::Other},
    {"concat", OpClass::Other},
    {"gather", OpClass::Other},
    {"attention", OpClass::Other},
    {"fused_matmul", OpClass::Fused},
    {"fused_elementwise", OpClass::Fused},
    {"fused_add_norm", OpClass::Fused},
}};
}  // namespace

const OpInfo& op_info(Op op) { return kOps[static_cast<size_t>(op)]; }

}  // namespace rungs::ops
