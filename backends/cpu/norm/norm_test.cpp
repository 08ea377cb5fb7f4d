// SPDX-License-Identifier: Apache-2.0
// Norm kernels vs their scalar reference, on every ISA this machine has.
#include <gtest/gtest.h>

#include "backends/cpu/norm/norm.hpp"
#include "backends/cpu/rows/testing.hpp"

namespace rungs::backend::cpu {
namespace {

using namespace testing;
using ops::Op;

// x (or a, b), gamma, [beta] for a node of kind `op` (FusedAddNorm: `norm`) on [rows, d].
struct NormCase {
  OneOp op;
  std::vector<Tensor> inputs;
};

NormCase make_case(Op op, Op norm, const Shape& compiled, const Shape& run_shape) {
  const int64_t d = compiled.back();
  std::vector<Shape> shapes{compiled};
  if (op == Op::FusedAddNorm) shapes.push_back(compiled);
  shapes.push_back({d});
  if (norm == Op::LayerNorm) shapes.push_back({d});
  NormCase c{OneOp(op, compiled, shapes), {}};
  NormParams& p = c.op.params.norm;
  p.rms = norm == Op::RmsNorm;
  p.add = op == Op::FusedAddNorm;
  p.has_beta = !p.rms;
  p.eps = p.rms ? 1e-6f : 1e-5f;
  c.inputs.push_back(make_tensor(run_shape, 1, -2.f, 6.f));  // offset mean: centring matters
  if (op == Op::FusedAddNorm) c.inputs.push_back(make_tensor(run_shape, 2));
  c.inputs.push_back(make_tensor({d}, 3, 0.5f, 1.5f));
  if (norm == Op::LayerNorm) c.inputs.push_back(make_tensor({d}, 4));
  return c;
}

double check(Isa isa, const NormCase& c, const Shape& run_shape, int threads = 1) {
  auto k = make_norm_kernel(c.op.spec(threads), isa);
  EXPECT_NE(k, nullptr);
  if (!k) return INFINITY;
  std::vector<TensorArg> args;
  for (const auto& t : c.inputs) args.push_back(t.arg());
  const Dims out = Dims::of(run_shape);
  std::vector<float> want(out.numel());
  norm_reference(c.op.params.norm, args, want.data(), out);
  return worst_ratio(run(*k, args, out, threads), want, 1e-5, 1e-5);
}

const std::pair<Op, Op> kKinds[] = {{Op::LayerNorm, Op::LayerNorm},
                                    {Op::RmsNorm, Op::RmsNorm},
                                    {Op::FusedAddNorm, Op::LayerNorm},
                                    {Op::FusedAddNorm, Op::RmsNorm}};

TEST(NormKernel, EveryKindAroundTheBatchWidthAndLadder) {
  ASSERT_FALSE(vector_isas().empty());
  for (Isa isa : vector_isas()) {
    std::vector<int64_t> ds = tile_sizes(lanes(isa));
    for (int64_t e : ladder_extents()) ds.push_back(e);
    ds.push_back(768);
    for (auto [op, norm] : kKinds) {
      for (int64_t d : ds) {
        SCOPED_TRACE(std::string(isa_name(isa)) + " op " + std::to_string(int(op)) + " norm " +
                     std::to_string(int(norm)) + " d " + std::to_string(d));
        Shape s{2, 3, d};
        EXPECT_LE(check(isa, make_case(op, norm, s, s), s), 1.0);
      }
    }
  }
}

TEST(NormKernel, RuntimeRowsSmallerThanCompiled) {
  for (Isa isa : vector_isas()) {
    for (auto [op, norm] : kKinds) {
      for (int64_t rows : {1, 9, 100}) {
        SCOPED_TRACE(std::string(isa_name(isa)) + " rows " + std::to_string(rows));
        Shape run_shape{1, rows, 96};
        EXPECT_LE(check(isa, make_case(op, norm, {1, 128, 96}, run_shape), run_shape), 1.0);
      }
    }
  }
}

// A constant row has variance 0: layer norm must give exactly beta (centred values exactly 0), not
// beta plus its rounding of the mean times 1/sqrt(eps). Chained norms amplified that rounding into
// a 0.4% error (fuzz_api). Every width around the batch, values whose sum rounds in f32.
TEST(NormKernel, ConstantRowsGiveExactlyBeta) {
  for (Isa isa : vector_isas()) {
    for (int64_t d : tile_sizes(lanes(isa))) {
      SCOPED_TRACE(std::string(isa_name(isa)) + " d " + std::to_string(d));
      Shape s{3, d};
      NormCase c = make_case(Op::LayerNorm, Op::LayerNorm, s, s);
      const float values[3] = {0.1f, -2.7182817f, 1234.5677f};
      for (int64_t r = 0; r < 3; ++r)
        for (int64_t j = 0; j < d; ++j) c.inputs[0].data[r * d + j] = values[r];
      std::vector<TensorArg> args;
      for (const auto& t : c.inputs) args.push_back(t.arg());
      auto k = make_norm_kernel(c.op.spec(1), isa);
      ASSERT_NE(k, nullptr);
      const std::vector<float> y = run(*k, args, Dims::of(s), 1);
      for (int64_t r = 0; r < 3; ++r)
        for (int64_t j = 0; j < d; ++j) ASSERT_EQ(y[r * d + j], c.inputs[2].data[j]) << "row " << r << " col " << j;
    }
  }
}

TEST(NormKernel, ThreadsGiveTheSameBitsAsOneThread) {
  for (Isa isa : vector_isas()) {
    for (auto [op, norm] : kKinds) {
      SCOPED_TRACE(std::string(isa_name(isa)));
      Shape s{256, 768};
      NormCase c = make_case(op, norm, s, s);
      std::vector<TensorArg> args;
      for (const auto& t : c.inputs) args.push_back(t.arg());
      auto k1 = make_norm_kernel(c.op.spec(1), isa), k3 = make_norm_kernel(c.op.spec(3), isa);
      EXPECT_EQ(run(*k1, args, Dims::of(s), 1), run(*k3, args, Dims::of(s), 3));
    }
  }
}

}  // namespace
}  // namespace rungs::backend::cpu
