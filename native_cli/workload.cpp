// SPDX-License-Identifier: Apache-2.0
#include "workload.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "limits.hpp"
#include "rungs/error.hpp"
#include "rungs/graph.hpp"

namespace rungs::cli {

namespace {

std::string fixed_int(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  std::istringstream is(s);
  while (std::getline(is, cur, sep)) parts.push_back(cur);
  if (!s.empty() && s.back() == sep) parts.emplace_back();
  return parts;
}

double number(const std::string& s, const std::string& what, const std::string& spec) {
  try {
    size_t used = 0;
    double v = std::stod(s, &used);
    if (used == s.size() && std::isfinite(v)) return v;
  } catch (...) {
  }
  throw UsageError{"'" + spec + "': " + what + " must be a number, got '" + s + "'"};
}

uint64_t positive(double v, const std::string& what, const std::string& spec) {
  if (v < 1 || v != std::floor(v) || v > 9.0e15)
    throw UsageError{"'" + spec + "': " + what + " must be a whole number in [1, 9000000000000000]"};
  return static_cast<uint64_t>(v);
}

}  // namespace

LadderSpec parse_ladder_spec(const std::string& spec) {
  LadderSpec s;
  s.text = spec;
  std::string body = spec;
  // Suffixes in any order: +head (the {1, 2, 4} head buckets), +active (active extent).
  for (bool again = true; again;) {
    again = false;
    for (const std::string suffix : {"+head", "+active"}) {
      if (body.size() > suffix.size() && body.compare(body.size() - suffix.size(), suffix.size(), suffix) == 0) {
        (suffix == "+head" ? s.head : s.active) = true;
        body.resize(body.size() - suffix.size());
        again = true;
      }
    }
  }
  auto parts = split(body, ':');
  if (parts.empty() || parts[0].empty())
    throw UsageError{"empty ladder spec; use pow2:MIN:MAX, geo:MIN:MAX:RATIO, lin:MIN:MAX:STEP, list:E1,E2,..., "
                     "optimal:K, exact or one:MAX (each optionally +head)"};
  s.kind = parts[0];
  size_t want;
  if (s.kind == "pow2") want = 2;
  else if (s.kind == "geo" || s.kind == "lin") want = 3;
  else if (s.kind == "optimal" || s.kind == "one") want = 1;
  else if (s.kind == "exact") want = 0;
  else if (s.kind == "list") {
    if (parts.size() != 2 || parts[1].empty())
      throw UsageError{"'" + spec + "': list takes comma-separated extents, e.g. list:1,2,4,8"};
    for (const auto& e : split(parts[1], ',')) s.args.push_back(positive(number(e, "an extent", spec), "an extent", spec));
    return s;
  } else {
    throw UsageError{"'" + spec + "': unknown ladder kind '" + s.kind +
                     "'; use pow2, geo, lin, list, optimal, exact or one"};
  }
  if (parts.size() != want + 1)
    throw UsageError{"'" + spec + "': " + s.kind + " takes " + std::to_string(want) + " values separated by ':'"};
  for (size_t i = 1; i < parts.size(); ++i) s.args.push_back(number(parts[i], "value " + std::to_string(i), spec));
  return s;
}

namespace {

// How many buckets a spec makes, counted without building them (stops past kMaxBuckets); 0 when
// the values are ones the ladder builder refuses (it then says why).
uint64_t bucket_count(const LadderSpec& s, std::span<const uint64_t> trace) {
  auto arg = [&](size_t i, const char* what) { return positive(s.args[i], what, s.text); };
  const uint64_t head = s.head ? std::size(ladder::kHead) : 0;
  if (s.kind == "lin") {
    const uint64_t min = arg(0, "MIN"), max = arg(1, "MAX"), step = arg(2, "STEP");
    return max < min ? 0 : (max - min + step - 1) / step + 1 + head;
  }
  if (s.kind == "geo") {
    const uint64_t min = arg(0, "MIN"), max = arg(1, "MAX");
    const double ratio = s.args[2];
    if (max < min || !(ratio > 1)) return 0;
    uint64_t n = 1;
    for (double e = static_cast<double>(min); e < static_cast<double>(max) && n <= kMaxBuckets; ++n)
      e = std::max(e + 1, std::ceil(e * ratio));
    return n + head;
  }
  if (s.kind == "list") return s.args.size() + head;
  if (s.kind == "optimal") return arg(0, "K") + head;
  if (s.kind == "exact") {
    std::vector<uint64_t> e(trace.size());
    std::copy(trace.begin(), trace.end(), e.begin());
    std::sort(e.begin(), e.end());
    uint64_t distinct = 0;
    for (size_t i = 0; i < e.size(); ++i) distinct += i == 0 || e[i] != e[i - 1];
    return distinct + head;
  }
  return 0;  // pow2 (at most 64 buckets) and one
}

}  // namespace

void check_optimal_cost(std::span<const uint64_t> trace, uint64_t max_buckets, const std::string& what) {
  std::vector<uint64_t> e(trace.size());
  std::copy(trace.begin(), trace.end(), e.begin());
  std::sort(e.begin(), e.end());
  double distinct = 0;
  for (size_t i = 0; i < e.size(); ++i) distinct += i == 0 || e[i] != e[i - 1];
  const double b = std::min(double(max_buckets), distinct);
  const double steps = (b - 1) * distinct * distinct / 2, bytes = 24 * b * distinct;
  if (steps > kMaxOptimalSteps || bytes > double(kMaxRequestBytes)) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%.0f distinct lengths and %.0f buckets need about %.3g steps and %.3g bytes",
                  distinct, b, steps, bytes);
    throw UsageError{what + ": the exact optimum over " + buf + "; at most " + fixed_int(kMaxOptimalSteps) +
                     " steps and 1 GiB: ask for fewer buckets, or round the lengths (fewer distinct ones)"};
  }
}

std::vector<Range> ladder_for(const LadderSpec& s, std::span<const uint64_t> trace) {
  auto arg = [&](size_t i, const char* what) { return positive(s.args[i], what, s.text); };
  if (const uint64_t n = bucket_count(s, trace); n > kMaxBuckets)
    throw UsageError{"'" + s.text + "' makes " + (s.kind == "geo" ? "more than " + std::to_string(kMaxBuckets) : std::to_string(n)) +
                     " buckets; at most " + std::to_string(kMaxBuckets) + " (each may become one compiled graph)"};
  std::vector<Range> r;
  if (s.kind == "pow2") {
    r = ladder::power_of_two(arg(0, "MIN"), arg(1, "MAX"), s.head);
  } else if (s.kind == "geo") {
    r = ladder::geometric(arg(0, "MIN"), arg(1, "MAX"), s.args[2], s.head);
  } else if (s.kind == "lin") {
    r = ladder::linear(arg(0, "MIN"), arg(1, "MAX"), arg(2, "STEP"), s.head);
  } else if (s.kind == "list") {
    std::vector<uint64_t> e(s.args.begin(), s.args.end());
    r = ladder::from_extents(e, s.head);
  } else if (s.kind == "one") {
    r = ladder::from_extents({arg(0, "MAX")}, s.head);
  } else if (s.kind == "optimal" || s.kind == "exact") {
    if (trace.empty()) throw UsageError{"'" + s.text + "' needs a trace"};
    if (s.kind == "optimal") {
      check_optimal_cost(trace, arg(0, "K"), "'" + s.text + "'");
      r = ladder::optimal(trace, arg(0, "K"));
    } else {
      std::vector<uint64_t> e(trace.begin(), trace.end());
      std::sort(e.begin(), e.end());
      e.erase(std::unique(e.begin(), e.end()), e.end());
      r = ladder::from_extents(e);
    }
    if (s.head) r = ladder::with_head(r);
  }
  return r;
}

std::string ladder_to_string(std::span<const Range> buckets) {
  std::string s;
  for (size_t i = 0; i < buckets.size(); ++i)
    s += (i ? ", " : "") + std::to_string(buckets[i].start) + ".." + std::to_string(buckets[i].end);
  return s;
}

std::vector<uint64_t> read_trace(const std::string& path) {
  check_input_file("trace", path);
  std::ifstream in(path);
  if (!in) throw Error(ErrorCode::ParseError, "trace '" + path + "': cannot open the file");
  std::vector<uint64_t> out;
  std::string line;
  size_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    line.erase(0, line.find_first_not_of(" \t\r"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (line.empty()) continue;
    bool digits = std::all_of(line.begin(), line.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits || line.size() > 15 || std::stoull(line) == 0)
      throw Error(ErrorCode::ParseError, "trace '" + path + "' line " + std::to_string(lineno) +
                                             ": expected one whole number >= 1 (a request length), got '" + printable(line) + "'");
    if (out.size() == kMaxRequests)
      throw Error(ErrorCode::OutOfRange, "trace '" + path + "' line " + std::to_string(lineno) + ": more than " +
                                             std::to_string(kMaxRequests) + " requests; split the trace");
    out.push_back(std::stoull(line));
  }
  if (out.empty()) throw Error(ErrorCode::ParseError, "trace '" + path + "': no lengths in the file");
  return out;
}

std::vector<std::string> split_specs(const std::vector<std::string>& values) {
  std::vector<std::string> specs;
  for (const auto& value : values)
    for (const auto& group : split(value, ';'))
      for (const auto& part : split(group, ',')) {
        // A part starting with a digit continues a list ladder: "list:16,64,256".
        const bool continues = !part.empty() && part[0] >= '0' && part[0] <= '9' && !specs.empty() &&
                               specs.back().rfind("list:", 0) == 0;
        if (continues) specs.back() += "," + part;
        else if (!part.empty()) specs.push_back(part);
      }
  return specs;
}

std::vector<uint64_t> synthetic_trace(const std::string& spec) {
  auto parts = split(spec, ':');
  if (parts.size() < 3 || parts.size() > 5 || parts[0] != "lognormal")
    throw UsageError{"'" + spec + "': use lognormal:MEDIAN:COUNT[:MAX[:SEED]]"};
  double median = number(parts[1], "MEDIAN", spec);
  if (!(median > 0)) throw UsageError{"'" + spec + "': MEDIAN must be > 0"};
  uint64_t count = positive(number(parts[2], "COUNT", spec), "COUNT", spec);
  if (count > kMaxRequests)
    throw UsageError{"'" + spec + "': COUNT " + parts[2] + " is out of range: at most " + std::to_string(kMaxRequests) + " requests"};
  uint64_t max = parts.size() > 3 ? positive(number(parts[3], "MAX", spec), "MAX", spec) : 256;
  uint64_t seed = 1;
  if (parts.size() > 4) {
    const double v = number(parts[4], "SEED", spec);
    if (v < 0 || v != std::floor(v) || v > 9.0e15) throw UsageError{"'" + spec + "': SEED must be a whole number in [0, 9000000000000000]"};
    seed = static_cast<uint64_t>(v);
  }
  return ladder::lognormal_trace(median, count, max, seed);
}

void add_load_options(CLI::App* cmd, LoadFlags& flags) {
  cmd->add_option("--bucket-dim", flags.bucket_dim,
                  "ONNX: the symbolic dim the cache buckets (default: the only one left after --fix)");
  cmd->add_option("--fix", flags.fix, "ONNX: bind a symbolic dim, NAME=VALUE (repeatable; a batch-like dim defaults to 1)")
      ->take_all()
      ->allow_extra_args(false);
}

Model load_cli_model(const std::string& path, const LoadFlags& flags) {
  check_input_file("model", path);
  std::vector<std::pair<std::string, int64_t>> fix;
  for (const std::string& f : flags.fix) {
    const size_t eq = f.find('=');
    const std::string name = f.substr(0, eq), value = eq == std::string::npos ? "" : f.substr(eq + 1);
    const bool digits = !value.empty() && value.size() <= 10 && value.find_first_not_of("0123456789") == std::string::npos;
    if (eq == std::string::npos || name.empty() || !digits || std::stoll(value) < 1 || std::stoll(value) > INT32_MAX)
      throw UsageError{"--fix: expected NAME=VALUE with a whole VALUE in [1, 2147483647], got '" + printable(f) + "'"};
    fix.emplace_back(name, std::stoll(value));
  }
  std::string ext = path.size() >= 5 ? path.substr(path.size() - 5) : "";
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext != ".onnx" && (!flags.bucket_dim.empty() || !fix.empty()))
    throw UsageError{"--bucket-dim and --fix apply to .onnx models; '" + path + "' is a rungs model file (its bucket dim is in the file)"};
  LoadOptions options;
  options.bucket_dim = flags.bucket_dim;
  options.fix = std::move(fix);
  return load_model(path, options);
}

ModelIo model_io(const Model& model, uint64_t extent) {
  auto ports = [](const std::vector<BucketLayout>& layouts) {
    std::vector<ModelIo::Port> out;
    for (const BucketLayout& l : layouts) out.push_back({l.name, l.shape, l.row_values.value_or(0)});
    return out;
  };
  ModelIo io;
  io.inputs = ports(model.input_layouts(extent));
  io.outputs = ports(model.output_layouts(extent));
  io.model = &model;
  return io;
}

void check_input_bytes(const ModelIo& io, uint64_t rows, const std::string& who) {
  double values = 0;  // a double: rows x inner may pass 2^64
  for (const auto& p : io.inputs)
    values += p.inner ? double(p.inner) * double(rows) : double(shape_numel(p.shape));
  if (values * sizeof(float) > double(kMaxRequestBytes)) {
    char bytes[32];
    std::snprintf(bytes, sizeof bytes, "%.0f", values * sizeof(float));
    throw Error(ErrorCode::OutOfRange, who + ": the inputs at " + std::to_string(rows) + " rows need " + bytes +
                                           " bytes, more than the " + std::to_string(kMaxRequestBytes) +
                                           " bytes (1 GiB) the CLI builds for one request");
  }
}

std::vector<std::vector<float>> synthetic_inputs(const ModelIo& io, uint64_t rows, uint64_t seed) {
  check_input_bytes(io, rows, "inputs");
  return io.model->synthetic_inputs(rows, seed);
}

}  // namespace rungs::cli
