// SPDX-License-Identifier: Apache-2.0
// native_cli/limits.hpp: what the CLI accepts, checked before anything is allocated. Option
// validators that parse the text themselves (CLI11's own print ranges as 309-digit doubles and
// wrap "-1" or 10^23 into a uint64), and the sizes past which a request is refused by name.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

namespace rungs::cli {

// At most this many requests in a trace (a file, --synthetic, `trace --count`).
inline constexpr uint64_t kMaxRequests = 10'000'000;
// At most this many buckets in one ladder: each may become one compiled graph.
inline constexpr uint64_t kMaxBuckets = 4096;
// At most this many steps of ladder::optimal's exact search (about 10 s on one core).
inline constexpr double kMaxOptimalSteps = 1e10;
// At most this many bytes of inputs built for one request (or one `run`).
inline constexpr uint64_t kMaxRequestBytes = uint64_t{1} << 30;
// At most this many times the hardware threads for --threads.
inline constexpr unsigned kThreadsPerHardwareThread = 4;

// A whole number in [min, max] written in decimal digits only: "-1", "1e3", "7.5" and values past
// max are refused with a message naming the range ("must be a whole number >= 1, got '0'").
CLI::Validator whole_number(uint64_t min, uint64_t max = UINT64_MAX);
// A finite number > 0 (and <= max): "must be a number > 0, got 'x'".
CLI::Validator positive_number(double max = 1e15);
// 0 (all hardware threads) up to kThreadsPerHardwareThread x the hardware threads.
CLI::Validator thread_count();
unsigned max_threads();

// `text` with bytes outside printable ASCII shown as \xNN, cut to `limit` characters: for echoing
// a line of a file that may be binary.
std::string printable(const std::string& text, size_t limit = 40);

// Refuses a path that is a directory, or missing, before a loader sees it ("is a directory").
// `what` names the role: "model", "trace", "ids", "input".
void check_input_file(const std::string& what, const std::string& path);

}  // namespace rungs::cli
