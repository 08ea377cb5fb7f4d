#include "workload.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "rungs/error.hpp"
#include "rungs/graph.hpp"

namespace rungs::cli {

namespace {

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
    throw UsageError{"'" + spec + "': " + what + " must be a whole number >= 1"};
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

std::vector<Range> ladder_for(const LadderSpec& s, std::span<const uint64_t> trace) {
  auto arg = [&](size_t i, const char* what) { return positive(s.args[i], what, s.text); };
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
                                             ": expected one whole number >= 1 (a request length), got '" + line + "'");
    out.push_back(std::stoull(line));
  }
  if (out.empty()) throw Error(ErrorCode::ParseError, "trace '" + path + "': no lengths in the file");
  return out;
}

std::vector<uint64_t> synthetic_trace(const std::string& spec) {
  auto parts = split(spec, ':');
  if (parts.size() < 3 || parts.size() > 5 || parts[0] != "lognormal")
    throw UsageError{"'" + spec + "': use lognormal:MEDIAN:COUNT[:MAX[:SEED]]"};
  double median = number(parts[1], "MEDIAN", spec);
  if (!(median > 0)) throw UsageError{"'" + spec + "': MEDIAN must be > 0"};
  uint64_t count = positive(number(parts[2], "COUNT", spec), "COUNT", spec);
  uint64_t max = parts.size() > 3 ? positive(number(parts[3], "MAX", spec), "MAX", spec) : 256;
  uint64_t seed = parts.size() > 4 ? static_cast<uint64_t>(number(parts[4], "SEED", spec)) : 1;
  return ladder::lognormal_trace(median, count, max, seed);
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

std::vector<std::vector<float>> synthetic_inputs(const ModelIo& io, uint64_t rows, uint64_t seed) {
  return io.model->synthetic_inputs(rows, seed);
}

}  // namespace rungs::cli
