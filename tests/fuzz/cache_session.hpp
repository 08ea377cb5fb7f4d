// SPDX-License-Identifier: Apache-2.0
// tests/fuzz/cache_session.hpp: fuzz bytes -> a session of BucketedCompileCache calls.
//
// Two caches with the same (random, possibly invalid) ladder, one on Device::Cpu and one on
// Device::Reference, get the same calls: get_or_compile and run_padded with random keys (inside,
// between and past the buckets), random row counts (some above the bucket's upper) and random
// input lengths. Both must answer alike (the same error code, the same std::nullopt); outputs must
// agree within the documented tolerance (unless nudging the params and x moves the reference by
// half of it), be sliced to actual_rows rows and never hold NaN (padded rows are masked); a
// compiled bucket keeps its graph; the counters add up.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fuzz_input.hpp"
#include "numerics.hpp"
#include "rungs/rungs.hpp"

namespace rungs::fuzz {

namespace cache_detail {

struct Model {
  int64_t width = 4;
  bool attention = false;
  bool norm = false;
  int act = 0;
  ParamMap params;
};

// x [upper, W] -> linear -> activation -> (layer_norm) -> (masked self-attention over the rows)
// -> y [upper, W]. mask [1, upper] keeps the real rows.
inline std::pair<Graph, ParamMap> build(const Model& m, uint64_t upper) {
  const auto rows = static_cast<int64_t>(upper);
  const int64_t w = m.width;
  Graph g;
  Value x = g.input("x", {rows, w});
  Value mask = g.input("mask", {1, rows});
  Value h = g.add(g.matmul(x, g.param("w", {w, w})), g.param("b", {w}));
  if (m.act == 1) h = g.relu(h);
  if (m.act == 2) h = g.gelu(h);
  if (m.norm) h = g.layer_norm(h, g.param("gamma", {w}), g.param("beta", {w}));
  if (m.attention) {
    Value s = g.reshape(h, {1, rows, w});
    AttentionOptions opt;
    opt.heads = w % 2 == 0 ? 2 : 1;
    opt.key_mask = mask;
    h = g.reshape(g.attention(s, s, s, opt), {rows, w});
  } else {
    h = g.mul(h, g.reshape(mask, {rows, 1}));
  }
  g.output("y", h);
  return {std::move(g), m.params};
}

inline std::vector<Range> ladder(FuzzInput& in) {
  std::vector<Range> r;
  const int n = static_cast<int>(in.range(0, 4));
  uint64_t at = in.below(3);
  for (int i = 0; i < n; ++i) {
    const uint64_t start = in.flag() ? at : in.below(40);  // mostly sorted; sometimes overlapping or empty
    const uint64_t end = start + in.below(12);
    r.push_back({start, end});
    at = end + in.below(2);
  }
  return r;
}

// The run again on a fresh Reference cache with the same buckets, x and the params nudged
// (fuzz::nudged): true when its output moves by more than half the tolerance, so Cpu and Reference
// cannot be held to it on this case.
inline bool ill_conditioned(const Model& m, const BucketedCompileCache& ref, uint64_t key, size_t actual,
                            const std::vector<float>& x, const std::vector<float>& mask,
                            const std::vector<float>& ref_output) {
  for (Nudge how : kNudges) {
    Model n = m;
    size_t phase = 0;
    for (auto& [name, data] : n.params) data = nudged(std::move(data), phase++, how);
    const std::vector<float> nx = nudged(x, how == Nudge::Random ? phase : 0, how);
    const PaddedInput inputs[] = {{"x", nx, static_cast<size_t>(m.width)}, {"mask", mask, 1}};
    const size_t inners[] = {static_cast<size_t>(m.width)};
    BucketedCompileCache again(Device::Reference, std::vector<Range>(ref.buckets().begin(), ref.buckets().end()));
    const std::optional<PaddedRun> run =
        again.run_padded(
            key, actual, [&](uint64_t upper) { return build(n, upper); }, inputs, inners);
    if (run && !testing::cpu_agrees(run->outputs[0], ref_output, testing::kCpuTolerance / 2).ok) return true;
  }
  return false;
}

template <class Make>
std::optional<BucketedCompileCache> make_cache(Make make, std::optional<ErrorCode>& error) {
  try {
    return make();
  } catch (const Error& e) {
    error = e.code();
    return std::nullopt;
  }
}

}  // namespace cache_detail

inline void cache_session(FuzzInput& in) {
  using cache_detail::Model;
  Model m;
  m.width = in.range(1, 6);
  m.attention = in.flag();
  m.norm = in.flag();
  m.act = static_cast<int>(in.below(3));
  for (const char* name : {"w", "b", "gamma", "beta"}) {
    const int64_t n = name[0] == 'w' ? m.width * m.width : m.width;
    std::vector<float>& v = m.params[name];
    for (int64_t i = 0; i < n; ++i) v.push_back(in.value() * 0.5f);
  }
  if (!m.norm) {
    m.params.erase("gamma");
    m.params.erase("beta");
  }

  std::optional<ErrorCode> cpu_err, ref_err;
  std::optional<BucketedCompileCache> cpu, ref;
  if (in.flag()) {
    const uint64_t lo = in.below(10), hi = in.below(70);
    cpu = cache_detail::make_cache([&] { return BucketedCompileCache::power_of_two_ladder(Device::Cpu, lo, hi); }, cpu_err);
    ref = cache_detail::make_cache([&] { return BucketedCompileCache::power_of_two_ladder(Device::Reference, lo, hi); },
                                   ref_err);
  } else {
    const std::vector<Range> r = cache_detail::ladder(in);
    cpu = cache_detail::make_cache([&] { return BucketedCompileCache(Device::Cpu, r); }, cpu_err);
    ref = cache_detail::make_cache([&] { return BucketedCompileCache(Device::Reference, r); }, ref_err);
  }
  fuzz_check(cpu_err == ref_err, "the two caches disagree on the ladder");
  if (!cpu) return;
  if (in.flag()) cpu->set_active_extent(true);

  auto build = [&](uint64_t upper) { return cache_detail::build(m, upper); };
  const int calls = 1 + static_cast<int>(in.below(6));
  for (int call = 0; call < calls && !in.empty(); ++call) {
    const uint64_t key = in.below(80);
    const std::optional<size_t> bucket = cpu->bucket_for(key);
    if (in.below(3) == 0) {  // get_or_compile twice: the second call returns the same graph
      try {
        auto a = cpu->get_or_compile(key, build);
        fuzz_check(a.has_value() == bucket.has_value(), "get_or_compile: nullopt iff the key has no bucket");
        if (a) {
          auto b = cpu->get_or_compile(key, build);
          fuzz_check(b && b->graph == a->graph && b->upper == a->upper, "get_or_compile: a compiled bucket changed");
          fuzz_check(a->upper == cpu->buckets()[*bucket].end - 1, "get_or_compile: upper is not end - 1");
        }
      } catch (const Error&) {
      }
      continue;
    }
    const size_t actual = in.below(static_cast<uint32_t>(key + 3));
    const size_t given = in.below(8) == 0 ? actual + 1 : actual;  // sometimes a wrong length
    const int64_t w = m.width;
    std::vector<float> x(given * static_cast<size_t>(w)), mask(actual, 1.f);
    for (float& v : x) v = in.value();
    const PaddedInput inputs[] = {{"x", x, static_cast<size_t>(w)}, {"mask", mask, 1}};
    const size_t inners[] = {static_cast<size_t>(w)};

    std::optional<PaddedRun> a, b;
    std::optional<ErrorCode> ea, eb;
    std::string ma;
    try {
      a = cpu->run_padded(key, actual, build, inputs, inners);
    } catch (const Error& e) {
      ea = e.code();
      ma = e.what();
    }
    try {
      b = ref->run_padded(key, actual, build, inputs, inners);
    } catch (const Error& e) {
      eb = e.code();
    }
    fuzz_check(ea == eb, "run_padded: cpu and reference caches disagree on the error (" + ma + ")");
    if (ea) continue;
    fuzz_check(a.has_value() == bucket.has_value() && b.has_value() == a.has_value(),
               "run_padded: nullopt iff the key has no bucket");
    if (!a) continue;
    fuzz_check(a->outputs.size() == 1 && a->outputs[0].size() == actual * static_cast<size_t>(w),
               "run_padded: the output is not sliced to actual_rows rows");
    for (float v : a->outputs[0]) fuzz_check(v == v, "run_padded: NaN in the output (padded rows leaking?)");
    const testing::Agreement ok = testing::cpu_agrees(a->outputs[0], b->outputs[0]);
    if (!ok.ok && cache_detail::ill_conditioned(m, *ref, key, actual, x, mask, b->outputs[0])) continue;
    fuzz_check(ok.ok, "run_padded: cpu and reference differ beyond the tolerance at " + ok.where + " (key " +
                          std::to_string(key) + ", actual " + std::to_string(actual) + ")");
  }
  const CacheStats st = cpu->stats();
  fuzz_check(st.compiles == cpu->compiled_count() && cpu->compiled_count() <= cpu->total_buckets(),
             "stats: compiles do not add up");
}

}  // namespace rungs::fuzz
