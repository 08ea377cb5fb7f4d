// SPDX-License-Identifier: Apache-2.0
// tests/numerics.hpp: the documented Device::Cpu vs Device::Reference tolerance (docs/numerics.md),
// shared by the GoogleTest suites and the fuzzers (no GoogleTest here).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

namespace rungs::testing {

// Per output: max |cpu - ref| <= kCpuTolerance * max(1, max |ref|), NaN exactly where the
// reference has NaN, and an infinity exactly where the reference has the same infinity.
constexpr double kCpuTolerance = 1e-4;

struct Agreement {
  bool ok = true;
  double error = 0;    // max |cpu - ref| over the finite pairs, divided by the output's scale
  std::string where;   // the first element at fault, when !ok
};

inline Agreement cpu_agrees(const std::vector<float>& cpu, const std::vector<float>& ref,
                            double tolerance = kCpuTolerance) {
  Agreement a;
  if (cpu.size() != ref.size()) {
    a.ok = false;
    a.where = "size " + std::to_string(cpu.size()) + " vs reference " + std::to_string(ref.size());
    return a;
  }
  double scale = 1;
  for (float r : ref)
    if (std::isfinite(r)) scale = std::max(scale, static_cast<double>(std::fabs(r)));
  for (size_t i = 0; i < ref.size(); ++i) {
    const float c = cpu[i], r = ref[i];
    bool same_class = std::isnan(c) == std::isnan(r) && std::isinf(c) == std::isinf(r);
    if (same_class && std::isinf(r)) same_class = c == r;
    if (!same_class) {
      if (a.ok) a.where = "element " + std::to_string(i) + ": cpu " + std::to_string(c) + ", reference " + std::to_string(r);
      a.ok = false;
      continue;
    }
    if (!std::isfinite(r)) continue;
    const double e = std::fabs(static_cast<double>(c) - r) / scale;
    if (e > tolerance && a.ok) {
      a.ok = false;
      a.where = "element " + std::to_string(i) + ": cpu " + std::to_string(c) + ", reference " + std::to_string(r);
    }
    a.error = std::max(a.error, e);
  }
  return a;
}

}  // namespace rungs::testing
