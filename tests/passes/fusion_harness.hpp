// SPDX-License-Identifier: Apache-2.0
// tests/passes/fusion_harness.hpp: compile one graph with fusion on and off, feed both the same
// random params and inputs, and hand back outputs and reports for structural and numeric checks.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "rungs/rungs.hpp"
#include "test_util.hpp"

namespace rungs::testing {

using InputMap = std::map<std::string, std::vector<float>>;

struct FusionRuns {
  CompileReport fused, plain;
  std::vector<std::vector<float>> fused_out, plain_out;
};

inline FusionRuns run_fused_and_plain(const Graph& g, Device device, const InputMap& fixed = {}, uint32_t seed = 7,
                                      bool dump_passes = false) {
  CompileOptions on;
  on.threads = 1;
  on.dump_passes = dump_passes;
  CompileOptions off = on;
  off.fusion = false;
  CompiledGraph cf = Session(device).compile(g, on);
  CompiledGraph cp = Session(device).compile(g, off);
  for (const std::string& name : cp.param_names()) {
    auto data = random_vector(static_cast<size_t>(shape_numel(cp.param_shape(name))), seed++);
    cf.set_param(name, data);
    cp.set_param(name, data);
  }
  InputMap inputs;
  for (const std::string& name : cp.input_names()) {
    auto it = fixed.find(name);
    inputs[name] = it != fixed.end() ? it->second
                                     : random_vector(static_cast<size_t>(shape_numel(cp.input_shape(name))), seed++);
  }
  std::vector<NamedInput> named;
  for (const auto& [name, data] : inputs) named.push_back({name, data});
  FusionRuns r{cf.report(), cp.report(), cf.run(named), cp.run(named)};
  return r;
}

// Every output of the fused compile equals the unfused one within `tol` (relative, see max_rel_error).
inline void expect_same_outputs(const FusionRuns& r, double tol = 1e-5) {
  ASSERT_EQ(r.fused_out.size(), r.plain_out.size());
  for (size_t i = 0; i < r.fused_out.size(); ++i) {
    EXPECT_LE(max_rel_error(r.fused_out[i], r.plain_out[i]), tol) << "output " << i;
    for (float x : r.plain_out[i]) ASSERT_TRUE(std::isfinite(x)) << "output " << i << " of the unfused run";
  }
}

inline size_t count_kernels(const CompileReport& rep, const std::string& op) {
  return static_cast<size_t>(
      std::count_if(rep.kernels.begin(), rep.kernels.end(), [&](const KernelReport& k) { return k.op == op; }));
}

inline const PassReport& pass_report(const CompileReport& rep, const std::string& name) {
  for (const PassReport& p : rep.passes)
    if (p.name == name) return p;
  ADD_FAILURE() << "no pass named " << name;
  static const PassReport none;
  return none;
}

// How many nodes a pass removed.
inline long nodes_removed(const CompileReport& rep, const std::string& name) {
  const PassReport& p = pass_report(rep, name);
  return static_cast<long>(p.nodes_before) - static_cast<long>(p.nodes_after);
}

inline std::string kernel_ops(const CompileReport& rep) {
  std::string s;
  for (const KernelReport& k : rep.kernels) s += k.op + " ";
  return s;
}

}  // namespace rungs::testing
