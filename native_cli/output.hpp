// SPDX-License-Identifier: Apache-2.0
// native_cli/output.hpp: aligned text tables and number formatting for the commands' output.
#pragma once

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

namespace rungs::cli {

inline std::string fixed(double v, int digits = 2) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// Scientific with 2 digits ("1.5e-07"), for differences.
inline std::string sci(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1e", v);
  return buf;
}

// Columns right-aligned except the first; a rule under the header.
class Table {
 public:
  explicit Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print(std::ostream& os) const {
    std::vector<size_t> w(rows_[0].size(), 0);
    for (const auto& r : rows_)
      for (size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], r[i].size());
    for (size_t k = 0; k < rows_.size(); ++k) {
      for (size_t i = 0; i < rows_[k].size(); ++i) {
        const std::string& c = rows_[k][i];
        std::string pad(w[i] - c.size(), ' ');
        os << (i ? "  " : "") << (i == 0 ? c + pad : pad + c);
      }
      os << '\n';
      if (k == 0) {
        size_t total = 0;
        for (size_t x : w) total += x + 2;
        os << std::string(total - 2, '-') << '\n';
      }
    }
  }

  // A GitHub-flavoured markdown table: the first column left-aligned, the others right-aligned.
  void print_markdown(std::ostream& os) const {
    for (size_t k = 0; k < rows_.size(); ++k) {
      os << '|';
      for (const std::string& c : rows_[k]) {
        std::string cell;
        for (char ch : c) cell += ch == '|' ? std::string("\\|") : std::string(1, ch);
        os << ' ' << cell << " |";
      }
      os << '\n';
      if (k == 0) {
        os << '|';
        for (size_t i = 0; i < rows_[0].size(); ++i) os << (i == 0 ? " --- |" : " ---: |");
        os << '\n';
      }
    }
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

// A progress line on stderr, only when stderr is a terminal.
class Progress {
 public:
  Progress(std::string label, size_t total);
  void step(size_t done);
  ~Progress();

 private:
  std::string label_;
  size_t total_;
  bool tty_;
  size_t last_ = static_cast<size_t>(-1);
};

}  // namespace rungs::cli
