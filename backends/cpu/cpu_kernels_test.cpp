// SPDX-License-Identifier: Apache-2.0
// Every IR op gets what cpu_coverage() declares for it from make_cpu_kernel (Device::Cpu): a
// vector kernel on each vector ISA of this machine, or the reference kernel by declaration.
#include <string>

#include <gtest/gtest.h>

#include "backends/cpu/families.hpp"
#include "backends/cpu/isa.hpp"
#include "backends/cpu/rows/testing.hpp"

namespace rungs::backend::cpu {
namespace {

using ir::Op;
using testing::OneNode;

// The last enumerator of ir::Op: extend this when an op is added after it.
constexpr Op kLastOp = Op::FusedAddNorm;

// A small valid one-node graph for op.
OneNode node_for(Op op) {
  ir::Node n;
  n.op = op;
  const Shape x{4, 8};
  n.shape = x;
  switch (op) {
    case Op::MatMul:
    case Op::FusedMatMul:
      n.shape = {4, 16};
      return OneNode({{4, 8}, {8, 16}}, std::move(n));
    case Op::Softmax:
      n.ints = {1};
      return OneNode({x}, std::move(n));
    case Op::LayerNorm:
      n.eps = 1e-5f;
      return OneNode({x, {8}, {8}}, std::move(n));
    case Op::RmsNorm:
      n.eps = 1e-6f;
      return OneNode({x, {8}}, std::move(n));
    case Op::FusedAddNorm:
      n.norm = Op::LayerNorm;
      n.eps = 1e-5f;
      return OneNode({x, x, {8}, {8}}, std::move(n));
    case Op::ReduceSum:
    case Op::ReduceMean:
    case Op::ReduceMax:
      n.shape = {4};
      n.ints = {1};
      return OneNode({x}, std::move(n));
    case Op::Gather:
      n.shape = {3, 8};
      return OneNode({{10, 8}, {3}}, std::move(n));
    case Op::Attention:
      n.shape = {1, 4, 8};
      n.heads = 2;
      return OneNode({{1, 4, 8}, {1, 4, 8}, {1, 4, 8}}, std::move(n));
    case Op::FusedElementwise:
      n.prog = {ir::Instr{Op::Add, 2, 0, 1}};
      n.regs = 3;
      return OneNode({x, x}, std::move(n));
    case Op::Transpose:
      n.shape = {8, 4};
      n.ints = {1, 0};
      return OneNode({x}, std::move(n));
    case Op::Slice:
      n.shape = {4, 4};
      n.ints = {1, 2, 4};
      return OneNode({x}, std::move(n));
    case Op::Concat:
      n.shape = {4, 16};
      n.ints = {1};
      return OneNode({x, x}, std::move(n));
    default:
      if (ir::is_binary(op)) return OneNode({x, x}, std::move(n));
      return OneNode({x}, std::move(n));
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
    const std::string name(ir::op_name(op));
    const CpuCoverage coverage = cpu_coverage(op);
    if (coverage == CpuCoverage::NoKernel) continue;
    (coverage == CpuCoverage::Vector ? vector_ops : reference_ops)++;
    const OneNode g = node_for(op);
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
    EXPECT_EQ(kernel->describe(), std::string(ir::op_name(op)) + "[reference]");
  }
}

}  // namespace
}  // namespace rungs::backend::cpu
