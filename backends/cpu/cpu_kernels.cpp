// SPDX-License-Identifier: Apache-2.0
// backends/cpu/cpu_kernels.cpp: Device::Cpu picks a vector kernel per node.
#include <array>

#include "backends/cpu/families.hpp"
#include "backends/cpu/isa.hpp"
#include "backends/kernel.hpp"

namespace rungs::backend {
namespace {

// One line per family; the first factory that accepts a node wins.
constexpr std::array<cpu::KernelFactory, 7> kFamilies = {
    &cpu::make_gemm_kernel,   &cpu::make_elementwise_kernel, &cpu::make_softmax_kernel,
    &cpu::make_norm_kernel,   &cpu::make_reduce_kernel,      &cpu::make_gather_kernel,
    &cpu::make_attention_kernel,
};

}  // namespace

namespace cpu {

CpuCoverage cpu_coverage(ops::Op op) {
  using ops::Op;
  switch (op) {
    case Op::Input: case Op::Param: case Op::Constant: case Op::Reshape:
      return CpuCoverage::NoKernel;
    case Op::Transpose: case Op::Slice: case Op::Concat:
      return CpuCoverage::Reference;
    case Op::MatMul: case Op::FusedMatMul:
    case Op::Add: case Op::Sub: case Op::Mul: case Op::Div: case Op::Maximum: case Op::Minimum:
    case Op::Relu: case Op::Gelu: case Op::GeluTanh: case Op::Silu: case Op::Sigmoid: case Op::Tanh:
    case Op::Exp: case Op::Log: case Op::Sqrt: case Op::Rsqrt: case Op::Neg: case Op::Abs:
    case Op::Pow: case Op::Equal: case Op::Less: case Op::Greater: case Op::LessEqual: case Op::GreaterEqual:
    case Op::Erf: case Op::Sin: case Op::Cos: case Op::LogicalNot: case Op::Where:
    case Op::FusedElementwise:
    case Op::Softmax: case Op::LayerNorm: case Op::RmsNorm: case Op::FusedAddNorm:
    case Op::ReduceSum: case Op::ReduceMean: case Op::ReduceMax:
    case Op::Gather: case Op::Attention:
      return CpuCoverage::Vector;
  }
  return CpuCoverage::Reference;
}

}  // namespace cpu

std::unique_ptr<Kernel> make_cpu_kernel(const KernelParams& params) {
  const cpu::Isa isa = cpu::active_isa();
  if (isa != cpu::Isa::Scalar) {
    for (cpu::KernelFactory factory : kFamilies) {
      if (auto kernel = factory(params, isa)) return kernel;
    }
  }
  return make_reference_kernel(params);
}

}  // namespace rungs::backend
