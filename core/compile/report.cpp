// SPDX-License-Identifier: Apache-2.0
// core/compile/report.cpp: CompileReport as text and JSON.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "rungs/session.hpp"

namespace rungs {

std::string CompileReport::to_text() const {
  std::string s;
  char line[256];
  std::snprintf(line, sizeof line, "device %s, isa %s, policy %s, threads %d, compile %.3f ms\n",
                to_string(device).c_str(), isa.c_str(), policy.c_str(), threads, compile_ms);
  s += line;
  s += "passes:\n";
  for (const PassReport& p : passes) {
    std::snprintf(line, sizeof line, "  %-22s %9.3f ms  nodes %4zu -> %4zu%s\n", p.name.c_str(), p.ms, p.nodes_before,
                  p.nodes_after, p.changed ? "  (changed)" : "");
    s += line;
  }
  s += "kernels:\n";
  for (const KernelReport& k : kernels)
    s += "  " + k.kernel + " " + shape_to_string(k.shape) +
         (k.row_segment >= 0 ? " (rows split, segment " + std::to_string(k.row_segment) + ")" : "") + "\n";
  std::snprintf(line, sizeof line, "arena %zu bytes (%zu without reuse), params %zu bytes\n", arena_bytes,
                intermediate_bytes, param_bytes);
  s += line;
  return s;
}

std::string CompileReport::to_json() const {
  nlohmann::json j;
  j["device"] = to_string(device);
  j["isa"] = isa;
  j["policy"] = policy;
  j["threads"] = threads;
  j["compile_ms"] = compile_ms;
  j["arena_bytes"] = arena_bytes;
  j["intermediate_bytes"] = intermediate_bytes;
  j["param_bytes"] = param_bytes;
  j["passes"] = nlohmann::json::array();
  for (const PassReport& p : passes) {
    nlohmann::json jp = {{"name", p.name},
                         {"ms", p.ms},
                         {"nodes_before", p.nodes_before},
                         {"nodes_after", p.nodes_after},
                         {"changed", p.changed}};
    if (!p.ir_after.empty()) jp["ir_after"] = p.ir_after;
    j["passes"].push_back(jp);
  }
  j["kernels"] = nlohmann::json::array();
  for (const KernelReport& k : kernels)
    j["kernels"].push_back({{"op", k.op}, {"kernel", k.kernel}, {"shape", k.shape}, {"row_segment", k.row_segment}});
  return j.dump(2);
}

}  // namespace rungs
