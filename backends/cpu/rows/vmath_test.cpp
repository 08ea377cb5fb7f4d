// SPDX-License-Identifier: Apache-2.0
// vmath's own formulas (exp_nonpositive, erfc_nonnegative, and GELU through it) against the same
// functions in double, on the default xsimd batch of this build (the kernels' tests cover each ISA
// through the ops that use them).
#include "backends/cpu/rows/vmath.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace rungs::backend::cpu {
namespace {

using B = xsimd::batch<float>;

float lane0(const B& b) { return b.get(0); }
double rel(double a, double ref) { return std::fabs(a - ref) / std::fabs(ref); }

TEST(Vmath, ExpNonpositiveWithinTwoUlpsDownToTheSmallestNormal) {
  double worst = 0;
  for (double x = -87.3; x <= 0; x += 1.7e-4) {
    const float xf = static_cast<float>(x);
    worst = std::max(worst, rel(lane0(vmath::exp_nonpositive(B(xf))), std::exp(double(xf))));
  }
  EXPECT_LT(worst, 2.5 * 5.97e-8);  // xsimd::exp's 2.1 ulp
  EXPECT_EQ(lane0(vmath::exp_nonpositive(B(0.f))), 1.f);
}

TEST(Vmath, ExpNonpositiveGivesZeroBelowTheNormalsAndNanForNan) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(lane0(vmath::exp_nonpositive(B(-inf))), 0.f);
  EXPECT_EQ(lane0(vmath::exp_nonpositive(B(-87.34f))), 0.f);
  EXPECT_EQ(lane0(vmath::exp_nonpositive(B(-1000.f))), 0.f);
  EXPECT_GT(lane0(vmath::exp_nonpositive(B(-87.33f))), 0.f);
  EXPECT_TRUE(std::isnan(lane0(vmath::exp_nonpositive(B(std::numeric_limits<float>::quiet_NaN())))));
  // Lanes are independent: a -inf lane beside finite ones.
  alignas(64) float in[B::size], out[B::size];
  for (size_t i = 0; i < B::size; ++i) in[i] = i % 2 ? -inf : -0.5f * float(i);
  vmath::exp_nonpositive(B::load_aligned(in)).store_aligned(out);
  for (size_t i = 0; i < B::size; ++i) EXPECT_NEAR(out[i], i % 2 ? 0.0 : std::exp(-0.5 * double(i)), 1e-7) << i;
}

TEST(Vmath, ErfcNonnegativeKeepsRelativePrecisionInTheTail) {
  double worst = 0;
  for (double z = 0; z <= 9; z += 1e-3) {
    const float zf = static_cast<float>(z);
    worst = std::max(worst, rel(lane0(vmath::erfc_nonnegative(B(zf))), std::erfc(double(zf))));
  }
  EXPECT_LT(worst, 1e-5);  // z*z's rounding, amplified by exp: 81 * 6e-8 at z = 9
  EXPECT_EQ(lane0(vmath::erfc_nonnegative(B(std::numeric_limits<float>::infinity()))), 0.f);
}

TEST(Vmath, GeluMatchesDoubleAcrossTheRangeAndKeepsItsSpecialValues) {
  double worst = 0;
  for (double x = -9; x <= 9; x += 1e-3) {
    const double xd = static_cast<float>(x);
    const double ref = 0.5 * xd * std::erfc(-xd / std::sqrt(2.0));
    if (std::fabs(ref) < 1e-10) continue;
    worst = std::max(worst, rel(lane0(vmath::gelu(B(float(xd)))), ref));
  }
  EXPECT_LT(worst, 5e-6);
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(lane0(vmath::gelu(B(inf))), inf);
  EXPECT_EQ(lane0(vmath::gelu(B(0.f))), 0.f);
  EXPECT_TRUE(std::isnan(lane0(vmath::gelu(B(std::numeric_limits<float>::quiet_NaN())))));
}

TEST(Vmath, GeluRationalFormIsExactEnoughAboveMinusTwo) {
  double worst = 0;
  for (double x = vmath::kGeluRationalMin; x <= 9; x += 1e-3) {
    const double xd = static_cast<float>(x);
    worst = std::max(worst, rel(lane0(vmath::gelu_rational(B(float(xd)))), 0.5 * xd * std::erfc(-xd / std::sqrt(2.0))));
  }
  EXPECT_LT(worst, 4e-6);  // a float ulp of erf near -0.95, relative to 1 + erf = 0.0455 at x = -2
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(lane0(vmath::gelu_rational(B(inf))), inf);
  EXPECT_EQ(lane0(vmath::gelu_rational(B(1e30f))), 1e30f);
  EXPECT_EQ(lane0(vmath::gelu_rational(B(0.f))), 0.f);
  EXPECT_TRUE(std::isnan(lane0(vmath::gelu_rational(B(std::numeric_limits<float>::quiet_NaN())))));
}

// The form is chosen per vector (4 lanes): one lane below -2 sends the whole vector to the tail
// form, and every lane keeps its precision whichever form ran.
TEST(Vmath, GeluChoosesItsFormPerVectorAndEveryLaneKeepsItsPrecision) {
  alignas(64) float mixed[B::size], plain[B::size], out[B::size];
  for (size_t i = 0; i < B::size; ++i) {
    mixed[i] = i == 1 ? -6.5f : -1.9f + 0.7f * float(i);
    plain[i] = -1.9f + 0.7f * float(i);
  }
  const B m = B::load_aligned(mixed), p = B::load_aligned(plain);
  vmath::gelu(m).store_aligned(out);
  for (size_t i = 0; i < B::size; ++i) {
    const double x = mixed[i];
    EXPECT_LT(rel(out[i], 0.5 * x * std::erfc(-x / std::sqrt(2.0))), 5e-6) << i;
  }
  EXPECT_TRUE(xsimd::all(vmath::gelu(m) == vmath::gelu_tail(m)));
  if constexpr (B::size == 4) {
    EXPECT_TRUE(xsimd::all(vmath::gelu(p) == vmath::gelu_rational(p)));
  } else {
    EXPECT_TRUE(xsimd::all(vmath::gelu(p) == vmath::gelu_tail(p)));
  }
}

}  // namespace
}  // namespace rungs::backend::cpu
