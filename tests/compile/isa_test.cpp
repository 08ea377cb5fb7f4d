// SPDX-License-Identifier: Apache-2.0
// rungs::cpu_isa() and rungs::available_isas() (rungs/isa.hpp): the library's own answer, the same
// detection the kernels dispatch with (so clients such as `rungs info` need no copy of it).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#if !defined(__EMSCRIPTEN__)
#include <xsimd/xsimd.hpp>
#endif

#include "backends/cpu/isa.hpp"
#include "rungs/rungs.hpp"

namespace rungs {
namespace {

TEST(Isa, PublicAnswersAreTheKernelsOwn) {
  const std::vector<std::string> isas = available_isas();
  ASSERT_FALSE(isas.empty());
  EXPECT_EQ(isas.back(), "scalar");
  EXPECT_EQ(isas.front(), cpu_isa());
  const auto internal = backend::cpu::available_isas();
  ASSERT_EQ(isas.size(), internal.size());
  for (size_t i = 0; i < isas.size(); ++i) EXPECT_EQ(isas[i], backend::cpu::isa_name(internal[i]));
  Graph g;
  g.output("y", g.relu(g.input("x", {8})));
  EXPECT_EQ(Session(Device::Cpu).compile(g).report().isa, cpu_isa());
#if defined(__EMSCRIPTEN__)
  EXPECT_EQ(cpu_isa(), "wasm");
#else
  // avx512f only with every AVX-512 subset the kernels are compiled for.
  const auto arch = xsimd::available_architectures();
  const bool avx512 = std::find(isas.begin(), isas.end(), "avx512f") != isas.end();
  EXPECT_EQ(avx512, arch.avx512f && arch.avx512cd && arch.avx512dq && arch.avx512bw);
#endif
}

TEST(Isa, AForcedIsaIsWhatCpuIsaReports) {
  for (backend::cpu::Isa isa : backend::cpu::available_isas()) {
    backend::cpu::force_isa(isa);
    EXPECT_EQ(cpu_isa(), backend::cpu::isa_name(isa));
    backend::cpu::reset_forced_isa();
  }
}

}  // namespace
}  // namespace rungs
