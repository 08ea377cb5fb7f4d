// SPDX-License-Identifier: Apache-2.0
#include "limits.hpp"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <system_error>
#include <thread>

#include "rungs/error.hpp"

namespace rungs::cli {

namespace {

std::string range_text(uint64_t min, uint64_t max) {
  if (max == UINT64_MAX) return "a whole number >= " + std::to_string(min);
  return "a whole number in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
}

}  // namespace

CLI::Validator whole_number(uint64_t min, uint64_t max) {
  const std::string want = range_text(min, max);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
        if (!digits) return "must be " + want + ", got '" + printable(text) + "'";
        uint64_t v = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec == std::errc::result_out_of_range || v > max)
          return "'" + printable(text) + "' is out of range: must be " + want;
        if (v < min) return "must be " + want + ", got '" + text + "'";
        return {};
      },
      max == UINT64_MAX ? "INT>=" + std::to_string(min) : "INT in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
}

CLI::Validator positive_number(double max) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double v = 0;
        size_t used = 0;
        try {
          v = std::stod(text, &used);
        } catch (...) {
          used = 0;
        }
        if (used == 0 || used != text.size() || !std::isfinite(v) || !(v > 0))
          return "must be a number > 0, got '" + printable(text) + "'";
        if (v > max) return "'" + printable(text) + "' is out of range: must be a number > 0 and <= " + CLI::detail::to_string(max);
        return {};
      },
      "NUMBER>0");
}

unsigned max_threads() {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  return hw * kThreadsPerHardwareThread;
}

CLI::Validator thread_count() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const unsigned cap = max_threads();
        const std::string want = "a whole number in [0, " + std::to_string(cap) + "] (0 = all hardware threads; at most " +
                                 std::to_string(kThreadsPerHardwareThread) + "x the " +
                                 std::to_string(cap / kThreadsPerHardwareThread) + " hardware threads)";
        const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
        uint64_t v = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (!digits) return "must be " + want + ", got '" + printable(text) + "'";
        if (ec == std::errc::result_out_of_range || v > cap) return "'" + printable(text) + "' is too many: must be " + want;
        return {};
      },
      "INT in [0, " + std::to_string(max_threads()) + "]");
}

std::string printable(const std::string& text, size_t limit) {
  std::string out;
  for (unsigned char c : text) {
    if (out.size() >= limit) {
      out += "...";
      break;
    }
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      static const char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

void check_input_file(const std::string& what, const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(status))
    throw Error(ErrorCode::ParseError, what + " '" + path + "': is a directory, not a file");
  if (!std::filesystem::exists(status))
    throw Error(ErrorCode::ParseError, what + " '" + path + "': no such file");
}

}  // namespace rungs::cli
