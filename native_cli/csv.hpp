// SPDX-License-Identifier: Apache-2.0
// native_cli/csv.hpp: CSV rows (RFC 4180) written through libcsv: a field holding a comma, a
// quote or a line break (a list ladder "list:16,64,256") is quoted by libcsv's csv_write, any
// other field is written as it is.
#pragma once

#include <csv.h>

#include <ostream>
#include <string>
#include <vector>

namespace rungs::cli {

class CsvWriter {
 public:
  explicit CsvWriter(std::ostream& os) : os_(os) {}
  void row(const std::vector<std::string>& fields) {
    for (size_t i = 0; i < fields.size(); ++i) {
      if (i) os_ << ',';
      field(fields[i]);
    }
    os_ << '\n';
  }

 private:
  void field(const std::string& f) {
    if (f.find_first_of(",\"\r\n") == std::string::npos) {
      os_ << f;
      return;
    }
    // csv_write returns the bytes it needs; the first call sizes the buffer.
    const size_t need = csv_write(nullptr, 0, f.data(), f.size());
    std::string out(need, '\0');
    csv_write(out.data(), out.size(), f.data(), f.size());
    os_ << out;
  }
  std::ostream& os_;
};

}  // namespace rungs::cli
