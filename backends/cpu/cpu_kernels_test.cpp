// SPDX-License-Identifier: Apache-2.0
// Every op gets what cpu_coverage() declares for it from make_cpu_kernel (Device::Cpu): a
// vector kernel on each vector ISA of this machine, or the reference kernel by declaration.
#include <string>

#include <gtest/gtest.h>

#include "backends/cpu/families.hpp"
#include "backends/cpu/isa.hpp"
#include "backends/cpu/rows/testing.hpp"

namespace rungs::backend::cpu {
namespace {

using ops::Op;
using testing::OneOp;

// The last enumerator of ops::Op: extend this when an op is added after it.
constexpr Op kLastOp = Op::FusedAddNorm;

// Small valid params for op.
OneOp node_for(Op op) {
  const Shape x{4, 8};
  switch (op) {
    case Op::MatMul:
    case Op::FusedMatMul:
      return OneOp(op, {4, 16}, {{4, 8}, {8, 16}});
    case Op::Softmax: {
      OneOp o(op, x, {x});
      o.params.softmax.axis = 1;
      return o;
    }
    case Op::LayerNorm: {
      OneOp o(op, x, {x, {8}, {8}});
      o.params.norm = {.has_beta = true, .eps = 1e-5f};
      return o;
    }
    case Op::RmsNorm: {
      OneOp o(op, x, {x, {8}});
      o.params.norm = {.rms = true, .eps = 1e-6f};
      return o;
    }
    case Op::FusedAddNorm: {
      OneOp o(op, x, {x, x, {8}, {8}});
      o.params.norm = {.add = true, .has_beta = true, .eps = 1e-5f};
      return o;
    }
    case Op::ReduceSum:
    case Op::ReduceMean:
    case Op::ReduceMax: {
      OneOp o(op, {4}, {x});
      o.params.reduce = {op == Op::ReduceSum    ? ReduceKind::Sum
                         : op == Op::ReduceMean ? ReduceKind::Mean
                                                : ReduceKind::Max,
                         {1}};
      return o;
    }
    case Op::Gather:
      return OneOp(op, {3, 8}, {{10, 8}, {3}});
    case Op::Attention: {
      OneOp o(op, {1, 4, 8}, {{1, 4, 8}, {1, 4, 8}, {1, 4, 8}});
      o.params.attention.heads = 2;
      return o;
    }
    case Op::FusedElementwise: {
      OneOp o(op, x, {x, x});
      o.params.elementwise = {{ops::Instr{Op::Add, 2, 0, 1}}, 3};
      return o;
    }
    case Op::Transpose: {
      OneOp o(op, {8, 4}, {x});
      o.params.transpose.perm = {1, 0};
      return o;
    }
    case Op::Slice: {
      OneOp o(op, {4, 4}, {x});
      o.params.slice = {1, 2, 4};
      return o;
    }
    case Op::Concat: {
      OneOp o(op, {4, 16}, {x, x});
      o.params.concat.axis = 1;
      return o;
    }
    default:
      if (ops::is_binary(op)) return OneOp(op, x, {x, x});
      if (ops::is_ternary(op)) return OneOp(op, x, {x, x, x});
      return OneOp(op, x, {x});
  }
}

struct ForcedIsa {
  explicit ForcedIsa(Isa isa) { force_isa(isa); }
  ~ForcedIsa() { reset_forced_isa(); }
};

TEST(CpuKernels, EveryOpHasAVectorKernelOrADeclaredFallback) {
  int vector_ops = 0, reference_ops = 0;
  for (int i = 0; i <= static_cast<int>(kLastOp); ++i) {
    const Op op = static_cast<Op>(i);
    const std::string name(ops::op_name(op));
    const CpuCoverage coverage = cpu_coverage(op);
    if (coverage == CpuCoverage::NoKernel) continue;
    (coverage == CpuCoverage::Vector ? vector_ops : reference_ops)++;
    const OneOp g = node_for(op);
    for (Isa isa : testing::vector_isas()) {
      ForcedIsa forced(isa);
      const auto kernel = make_cpu_kernel(g.spec());
      ASSERT_NE(kernel, nullptr) << name;
      const std::string got = kernel->describe();
      if (coverage == CpuCoverage::Vector) {
        EXPECT_EQ(got.find("[reference]"), std::string::npos)
            << name << " at " << isa_name(isa) << ": declared Vector but fell back to " << got;
        EXPECT_NE(got.find(std::string("[") + std::string(isa_name(isa)) + "]"), std::string::npos)
            << name << " at " << isa_name(isa) << ": the kernel is " << got;
      } else {
        EXPECT_EQ(got, name + "[reference]") << name << " at " << isa_name(isa);
      }
    }
  }
  // The declaration is not vacuous: both kinds exist.
  EXPECT_GT(vector_ops, 20);
  EXPECT_GT(reference_ops, 0);
}

// Without a vector ISA every op runs on the reference kernel.
TEST(CpuKernels, ScalarRunsTheReference) {
  ForcedIsa forced(Isa::Scalar);
  for (Op op : {Op::MatMul, Op::Softmax, Op::Add, Op::Attention}) {
    const auto kernel = make_cpu_kernel(node_for(op).spec());
    EXPECT_EQ(kernel->describe(), std::string(ops::op_name(op)) + "[reference]");
  }
}

}  // namespace
}  // namespace rungs::backend::cpu
