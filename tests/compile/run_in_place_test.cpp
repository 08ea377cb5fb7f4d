// SPDX-License-Identifier: Apache-2.0
// CompiledGraph::run_in_place: the caller writes the inputs into the run's workspace and reads the
// outputs from it; the results equal run()'s, on both devices.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "rungs/rungs.hpp"

namespace rungs {
namespace {

class RunInPlace : public ::testing::TestWithParam<Device> {};

TEST_P(RunInPlace, EqualsRunWithTheInputsWrittenInPlace) {
  Graph g;
  Value a = g.input("a", {4, 8});
  Value b = g.input("b", {4, 8});
  Value h = g.matmul(g.add(a, b), g.param("w", {8, 3}));
  g.output("y", g.relu(h));
  g.output("s", g.softmax(h, -1));
  CompiledGraph c = Session(GetParam()).compile(g);
  std::vector<float> w(24);
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(0.3f * static_cast<float>(i));
  c.set_param("w", w);
  std::vector<float> av(32), bv(32);
  for (size_t i = 0; i < 32; ++i) av[i] = std::cos(0.7f * static_cast<float>(i)), bv[i] = 0.01f * static_cast<float>(i);
  const NamedInput in[] = {{"a", av}, {"b", bv}};
  const auto want = c.run(in);

  ASSERT_EQ(c.input_names(), (std::vector<std::string>{"a", "b"}));
  std::vector<size_t> filled;
  std::vector<std::vector<float>> got(2);
  for (int rep = 0; rep < 2; ++rep) {  // a second run reuses the workspace
    filled.clear();
    c.run_in_place(
        [&](size_t k, std::span<float> dest) {
          const std::vector<float>& src = k == 0 ? av : bv;
          ASSERT_EQ(dest.size(), src.size());
          std::copy(src.begin(), src.end(), dest.begin());
          filled.push_back(k);
        },
        [&](size_t j, std::span<const float> values) { got.at(j).assign(values.begin(), values.end()); });
    EXPECT_EQ(filled, (std::vector<size_t>{0, 1}));
    ASSERT_EQ(got.size(), want.size());
    for (size_t j = 0; j < want.size(); ++j) EXPECT_EQ(got[j], want[j]) << "output " << c.output_names()[j];
  }
  EXPECT_EQ(got[0].size(), 12u);
}

TEST_P(RunInPlace, AParamNotSetThrowsBeforeAnyInputIsAskedFor) {
  Graph g;
  g.output("y", g.matmul(g.input("x", {2, 3}), g.param("w", {3, 2})));
  CompiledGraph c = Session(GetParam()).compile(g);
  int fills = 0, takes = 0;
  try {
    c.run_in_place([&](size_t, std::span<float>) { ++fills; }, [&](size_t, std::span<const float>) { ++takes; });
    FAIL() << "expected ParamNotSet";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::ParamNotSet);
    EXPECT_NE(std::string(e.what()).find("run_in_place: param 'w' [3, 2] was never set"), std::string::npos) << e.what();
  }
  EXPECT_EQ(fills, 0);
  EXPECT_EQ(takes, 0);
}

INSTANTIATE_TEST_SUITE_P(Devices, RunInPlace, ::testing::Values(Device::Reference, Device::Cpu),
                         [](const auto& info) { return info.param == Device::Cpu ? "Cpu" : "Reference"; });

}  // namespace
}  // namespace rungs
