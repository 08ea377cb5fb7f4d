// SPDX-License-Identifier: Apache-2.0
// tests/fuzz/fuzz_input.hpp: what every fuzz target shares.
//
// FuzzInput hands out the fuzzer's bytes as small decisions (a choice among n, a flag, a value
// from a fixed table); once the bytes run out every answer is 0, so any input is a complete case.
// fuzz_check aborts with a message: the fuzzer reports the abort as a crash and keeps the input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace rungs::fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : bytes_(data, size) {}

  bool empty() const { return pos_ >= bytes_.size(); }
  uint8_t byte() { return empty() ? 0 : bytes_[pos_++]; }
  // A number in [0, n) (0 when n is 0).
  uint32_t below(uint32_t n) {
    if (n == 0) return 0;
    const uint32_t raw = n <= 256 ? byte() : (uint32_t{byte()} << 8 | byte());
    return raw % n;
  }
  // A number in [lo, hi] (lo when hi < lo).
  int64_t range(int64_t lo, int64_t hi) {
    return hi < lo ? lo : lo + static_cast<int64_t>(below(static_cast<uint32_t>(hi - lo + 1)));
  }
  bool flag() { return byte() & 1; }
  // A float from a table of ordinary values (exact in f32, inside [-4, 4]); with `special`, NaN
  // and the infinities too.
  float value(bool special = false) {
    static constexpr float kTable[] = {0.f, 1.f, -1.f, 0.5f, -0.5f, 2.f, -2.f, 0.25f, -3.75f, 3.f, 0.125f, -0.875f,
                                       1.5f, -1.25f, 4.f, -4.f};
    const uint8_t b = byte();
    if (special && (b & 0xf0) == 0xf0) {
      switch (b & 3) {
        case 0: return std::numeric_limits<float>::quiet_NaN();
        case 1: return std::numeric_limits<float>::infinity();
        case 2: return -std::numeric_limits<float>::infinity();
        default: return -0.f;
      }
    }
    return kTable[b % 16];
  }
  // The bytes not consumed yet.
  std::span<const uint8_t> rest() {
    auto r = bytes_.subspan(pos_);
    pos_ = bytes_.size();
    return r;
  }

 private:
  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
};

// Values nudged by 2^-20 (about 8 ulps), up or down: a rounding-sized error. A case whose
// reference output moves by more than half the tolerance under such errors (in its inputs and
// params, and in fuzz_api after every op too) amplifies rounding beyond what the tolerance allows
// (docs/numerics.md, "Ill-conditioned graphs"): when Cpu and Reference disagree on it, the fuzzers
// skip the comparison rather than report a bug. One pattern of signs can miss a cancellation that
// another exposes, so the fuzzers try both of these and skip when either moves the output:
// - Alternating: up and down by index, starting at `phase` (each tensor its own). With one pattern
//   for all tensors, a layer norm's gamma[0] and beta[0] moved together, and gamma * x + beta =
//   1.9999975 - 2 kept its cancellation exactly (fuzz_api in CI, session 8); the phases move them
//   apart.
// - Random: pseudo-random signs from (phase, index). With alternating signs the rows of a
//   row-wise sum moved alike, and a layer norm across those sums, which removes what they share,
//   hid a cancellation whose rounding moves the result by 1e-3 (fuzz_api in CI, session 9).
enum class Nudge {
  Alternating,
  Random
};
inline constexpr Nudge kNudges[] = {Nudge::Alternating, Nudge::Random};

inline std::vector<float> nudged(std::vector<float> v, size_t phase = 0, Nudge how = Nudge::Alternating) {
  constexpr float kNudge = 0x1p-20f;
  for (size_t i = 0; i < v.size(); ++i) {
    bool up = (i + phase) % 2 == 0;
    if (how == Nudge::Random) {
      uint64_t h = (static_cast<uint64_t>(phase) << 32) ^ static_cast<uint64_t>(i);  // SplitMix64 of (phase, i)
      h += 0x9e3779b97f4a7c15ull;
      h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
      h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
      up = ((h ^ (h >> 31)) & 1) != 0;
    }
    v[i] *= 1.f + (up ? kNudge : -kNudge);
  }
  return v;
}

[[noreturn]] inline void fuzz_fail(const std::string& what) {
  std::fprintf(stderr, "fuzz check failed: %s\n", what.c_str());
  std::abort();
}

inline void fuzz_check(bool ok, const std::string& what) {
  if (!ok) fuzz_fail(what);
}

}  // namespace rungs::fuzz
