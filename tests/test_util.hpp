// SPDX-License-Identifier: Apache-2.0
// tests/test_util.hpp: helpers shared by the GoogleTest suites.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "rungs/rungs.hpp"

// Sanitizers reserve terabytes of shadow memory, which an address-space limit forbids: tests that
// lower the limit skip themselves under ASan and TSan.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

// Tests that start std::threads skip themselves in a wasm build without pthreads (the npm
// module is single-threaded so it loads in pages without cross-origin isolation).
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
#define RUNGS_SKIP_WITHOUT_THREADS() GTEST_SKIP() << "this wasm build has no threads"
#else
#define RUNGS_SKIP_WITHOUT_THREADS() (void)0
#endif

namespace rungs::testing {

// Runs f and checks it throws rungs::Error with `code` and a message containing `needle`.
template <typename F>
void expect_error(F&& f, ErrorCode code, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error thrown, expected " << to_string(code) << " containing '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << "message: " << e.what();
  }
}

inline std::vector<float> random_vector(size_t n, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// max |a - b| / max(1, |b|) over the elements; sizes must match.
inline double max_rel_error(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    double d = std::fabs(static_cast<double>(a[i]) - b[i]) / std::max(1.0, std::fabs(static_cast<double>(b[i])));
    if (std::isnan(a[i]) != std::isnan(b[i])) d = INFINITY;
    worst = std::max(worst, d);
  }
  return worst;
}

// Compiles `g`, sets params from `params`, runs with `inputs`; returns all outputs.
inline std::vector<std::vector<float>> compile_and_run(const Graph& g, Device device,
                                                       const std::vector<std::pair<std::string, std::vector<float>>>& inputs,
                                                       const ParamMap& params = {}, CompileOptions options = {}) {
  CompiledGraph c = Session(device).compile(g, options);
  for (const auto& [name, data] : params) c.set_param(name, data);
  std::vector<NamedInput> named;
  for (const auto& [name, data] : inputs) named.push_back({name, data});
  return c.run(named);
}

inline void PrintTo(Device d, std::ostream* os) { *os << to_string(d); }

}  // namespace rungs::testing

namespace rungs {
inline void PrintTo(Device d, std::ostream* os) { *os << to_string(d); }
}  // namespace rungs
