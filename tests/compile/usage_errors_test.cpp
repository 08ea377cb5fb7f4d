// SPDX-License-Identifier: Apache-2.0
// API misuse around compile and run that the other suites do not reach (docs/errors.md): each
// call is refused with the right code and a message naming the thing at fault, and the compiled
// graph or session works unchanged afterwards.
#include <gtest/gtest.h>

#include "rungs/rungs.hpp"
#include "test_util.hpp"

namespace {

using namespace rungs;
using rungs::testing::expect_error;

Graph small() {
  Graph g;
  Value x = g.input("x", {2, 3});
  g.output("y", g.mul(g.relu(x), g.param("s", {3})));
  return g;
}

TEST(UsageErrors, NegativeThreadCount) {
  CompileOptions bad;
  bad.threads = -2;
  Session session(Device::Cpu);
  expect_error([&] { session.compile(small(), bad); }, ErrorCode::InvalidArgument,
               "compile: threads must be >= 0 (0 = all hardware threads), got -2");
  EXPECT_NO_THROW(session.compile(small()));
}

TEST(UsageErrors, AnInputGivenTwiceAndUnknownNamesInQueries) {
  for (Device device : {Device::Cpu, Device::Reference}) {
    CompiledGraph c = Session(device).compile(small());
    c.set_param("s", std::vector<float>{1, 2, 3});
    const std::vector<float> x = {1, -1, 2, -2, 3, -3};
    const NamedInput twice[] = {{"x", x}, {"x", x}};
    expect_error([&] { c.run(twice); }, ErrorCode::InvalidArgument, "run: input 'x' is given twice");
    expect_error([&] { c.input_shape("y"); }, ErrorCode::UnknownName, "input_shape: unknown input 'y'; the graph's inputs are: 'x'");
    expect_error([&] { c.output_shape("x"); }, ErrorCode::UnknownName, "output_shape: unknown output 'x'; the graph's outputs are: 'y'");
    expect_error([&] { c.param_shape("w"); }, ErrorCode::UnknownName, "param_shape: unknown param 'w'; the graph's params are: 's'");
    expect_error([&] { c.param_is_set("w"); }, ErrorCode::UnknownName, "param_is_set: unknown param 'w'");
    // Unchanged: the same graph runs with its param as set.
    const NamedInput once[] = {{"x", x}};
    EXPECT_EQ(c.run(once)[0], (std::vector<float>{1, 0, 6, 0, 6, 0}));
  }
}

TEST(UsageErrors, RunRowsBeforePrepare) {
  CompiledGraph c = Session(Device::Cpu).compile(small());
  const std::vector<float> x(6, 1.f);
  const NamedInput in[] = {{"x", x}};
  expect_error([&] { c.run_rows(in, 1); }, ErrorCode::Unsupported, "run_rows: call prepare_active_rows(extent) first");
}

}  // namespace
