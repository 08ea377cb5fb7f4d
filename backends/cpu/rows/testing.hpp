// SPDX-License-Identifier: Apache-2.0
// backends/cpu/rows/testing.hpp: helpers the row-kernel tests and benchmarks share: one op's params,
// buffers with the read-past slack kernels may use, running a kernel on N threads, comparing.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/isa.hpp"
#include "backends/kernel.hpp"
#include "backends/thread_pool.hpp"

namespace rungs::backend::cpu::testing {

constexpr size_t kSlackFloats = kReadPastBytes / sizeof(float);

// A tensor for a test: values plus kSlack floats of poison after the logical end.
struct Tensor {
  Shape shape;
  std::vector<float> data;  // numel + kSlackFloats
  int64_t numel() const { return static_cast<int64_t>(data.size() - kSlackFloats); }
  TensorArg arg() const { return {data.data(), Dims::of(shape)}; }
};

inline Tensor make_tensor(Shape shape, uint32_t seed, float lo = -3.f, float hi = 3.f) {
  Tensor t{std::move(shape), {}};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  t.data.resize(static_cast<size_t>(Dims::of(t.shape).numel()) + kSlackFloats, std::nanf(""));
  for (int64_t i = 0; i < t.numel(); ++i) t.data[i] = dist(rng);
  return t;
}

// One op's kernel parameters, as core/compile would make them for a node with these input
// shapes (and sources: Activation unless given); a test sets the op's own parameters on `params`.
struct OneOp {
  KernelParams params;
  OneOp(ops::Op op, const Shape& out, const std::vector<Shape>& in_shapes, std::vector<Source> sources = {}) {
    params.op = op;
    params.out = Dims::of(out);
    for (size_t i = 0; i < in_shapes.size(); ++i)
      params.inputs.push_back({Dims::of(in_shapes[i]), i < sources.size() ? sources[i] : Source::Activation, nullptr});
  }
  // The parameters for `threads` threads under `policy`.
  KernelParams spec(int threads = 1, PrecisionPolicy policy = PrecisionPolicy::f32()) const {
    KernelParams p = params;
    p.threads = threads;
    p.policy = policy;
    return p;
  }
};

// Runs k on `threads` threads (a pool of threads-1 workers) and returns the output, checking that
// nothing was written into the slack past its end.
inline std::vector<float> run(const Kernel& k, const std::vector<TensorArg>& in, const Dims& out_dims,
                              int threads = 1) {
  const auto n = static_cast<size_t>(out_dims.numel());
  std::vector<float> out(n + kSlackFloats, -12345.f);
  std::unique_ptr<ThreadPool> pool;
  RunContext ctx;
  if (threads > 1) {
    pool = std::make_unique<ThreadPool>(threads - 1);
    ctx.pool = pool.get();
    ctx.threads = threads;
  }
  std::vector<float> scratch(k.scratch_floats() + kSlackFloats);
  ctx.scratch = scratch.data();
  k.run(ctx, in, out.data(), out_dims);
  for (size_t i = n; i < out.size(); ++i)
    if (out[i] != -12345.f) throw std::runtime_error("kernel wrote past the end of its output");
  out.resize(n);
  return out;
}

// Largest |a-b| / (atol + rtol*|b|) over the elements; <= 1 passes. NaN anywhere counts as a
// failure unless both sides are NaN.
inline double worst_ratio(const std::vector<float>& got, const std::vector<float>& want, double rtol,
                          double atol) {
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(got[i]) || std::isnan(want[i])) {
      if (!(std::isnan(got[i]) && std::isnan(want[i]))) return INFINITY;
      continue;
    }
    if (got[i] == want[i]) continue;  // equal infinities
    const double r = std::fabs(double(got[i]) - want[i]) / (atol + rtol * std::fabs(double(want[i])));
    worst = std::max(worst, r);
  }
  return worst;
}

inline std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

// The vector ISAs of this machine (available_isas() without Scalar, which row kernels leave to the
// reference backend): every test runs on each in turn.
inline std::vector<Isa> vector_isas() {
  std::vector<Isa> out;
  for (Isa isa : available_isas())
    if (isa != Isa::Scalar) out.push_back(isa);
  return out;
}

// Sizes around a batch width w: w-1, w, w+1, 2w+3.
inline std::vector<int64_t> tile_sizes(int64_t w) { return {w - 1, w, w + 1, 2 * w + 3}; }
// The extents a power-of-two ladder (8..256) produces.
inline std::vector<int64_t> ladder_extents() { return {8, 16, 32, 64, 128, 256}; }
// Batch widths of the ISAs of this machine (floats per register), for tile sizes.
inline int64_t lanes(Isa isa) {
  switch (isa) {
    case Isa::Avx512: return 16;
    case Isa::Avx2: return 8;
    default: return 4;
  }
}

}  // namespace rungs::backend::cpu::testing
