// SPDX-License-Identifier: Apache-2.0
// Writes the native build's encoder outputs for the npm package's tests to compare against
// (wasm/test/encoder.test.mjs): the bundled encoder, bucketed with the power-of-two ladder (8, 256)
// through run_padded, at lengths that hit every bucket and its edges. The JavaScript test loads the
// same model from bytes, runs the same requests in wasm and checks every value to 1e-5 relative.
// scripts/test runs this (ctest) before the node tests and hands them RUNGS_FIXTURE_PATH.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rungs/cache.hpp"
#include "rungs/model.hpp"

#ifndef RUNGS_FIXTURE_PATH
#error "RUNGS_FIXTURE_PATH must name the fixture file (tests/model/CMakeLists.txt sets it)"
#endif

namespace rungs {
namespace {

TEST(WasmFixture, EncoderBucketedOutputsWritten) {
  const Model model = load_model(std::string(RUNGS_EXAMPLES_DIR) + "/models/encoder.json");
  auto cache = BucketedCompileCache::power_of_two_ladder(Device::Cpu, 8, 256);
  const std::vector<uint64_t> lengths = {1, 3, 8, 9, 16, 17, 40, 64, 65, 100, 129, 200, 256};

  nlohmann::json requests = nlohmann::json::array();
  for (const uint64_t n : lengths) {
    // ids spread over the vocab, as the JS test makes them; mask 1 on every real token.
    std::vector<float> ids(n), mask(n, 1.f);
    for (uint64_t i = 0; i < n; ++i) ids[i] = static_cast<float>((i * 379 + 11) % 1000);
    const PaddedInput inputs[] = {{"ids", ids, 1}, {"mask", mask, 1}};
    const auto run = cache.run_padded(n, n, [&](uint64_t upper) { return model.build(upper); }, inputs, {});
    ASSERT_TRUE(run.has_value()) << "length " << n;
    ASSERT_EQ(run->outputs.size(), 1u);
    const std::vector<float>& embedding = run->outputs[0];
    ASSERT_EQ(embedding.size(), 128u) << "the encoder pools to [1, 128]";
    for (const float v : embedding) ASSERT_TRUE(std::isfinite(v)) << "length " << n;
    requests.push_back({{"length", n}, {"upper", run->upper}, {"embedding", embedding}});
  }
  EXPECT_EQ(cache.compiled_count(), 6u);

  const std::filesystem::path path = RUNGS_FIXTURE_PATH;
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << nlohmann::json{{"model", "encoder"}, {"ladder", "powerOfTwo(8, 256)"}, {"requests", requests}}.dump();
  const auto written = nlohmann::json::parse(std::ifstream(path));
  EXPECT_EQ(written["requests"].size(), lengths.size());
}

}  // namespace
}  // namespace rungs
