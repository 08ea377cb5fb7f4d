// SPDX-License-Identifier: Apache-2.0
// core/model/json_util.cpp: strict JSON parsing for model files and safetensors headers.
#include "core/model/json_util.hpp"

#include <limits>
#include <set>
#include <vector>

#include "core/check.hpp"
#include "core/model/frontend.hpp"

namespace rungs::model_json {

nlohmann::json parse_strict(std::string_view text, std::string_view source, std::string_view what) {
  using json = nlohmann::json;
  // One set of seen keys per open object; nlohmann's parser is iterative, so deep nesting costs
  // heap, not stack.
  std::vector<std::set<std::string>> open;
  auto on_event = [&](int /*depth*/, json::parse_event_t event, json& parsed) -> bool {
    switch (event) {
      case json::parse_event_t::object_start:
        open.emplace_back();
        break;
      case json::parse_event_t::object_end:
        if (!open.empty()) open.pop_back();
        break;
      case json::parse_event_t::key:
        if (!open.empty() && !open.back().insert(parsed.get<std::string>()).second) {
          fail(ErrorCode::ParseError, std::string(source) + ": " + std::string(what) + ": duplicate key " +
                                          preview(parsed) + " in one object");
        }
        break;
      default:
        break;
    }
    return true;
  };
  try {
    return json::parse(text.begin(), text.end(), on_event, /*allow_exceptions=*/true);
  } catch (const json::exception& e) {
    fail(ErrorCode::ParseError,
         std::string(source) + ": " + std::string(what) + ": invalid JSON: " + e.what());
  }
}

std::string kind(const nlohmann::json& j) {
  if (j.is_object()) return "object";
  if (j.is_array()) return "array";
  if (j.is_string()) return "string";
  if (j.is_number_integer()) return "integer";
  if (j.is_number()) return "number";
  if (j.is_boolean()) return "boolean";
  if (j.is_null()) return "null";
  return "value";
}

std::string preview(const nlohmann::json& j) {
  std::string s;
  if (j.is_object()) return "an object";
  if (j.is_array()) return "an array of " + std::to_string(j.size());
  s = j.dump(-1, ' ', /*ensure_ascii=*/true, nlohmann::json::error_handler_t::replace);
  if (s.size() > 64) s = s.substr(0, 60) + "...";
  return s;
}

bool as_int64(const nlohmann::json& j, int64_t& out) {
  if (j.is_number_unsigned()) {
    auto u = j.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
    out = static_cast<int64_t>(u);
    return true;
  }
  if (j.is_number_integer()) {
    out = j.get<int64_t>();
    return true;
  }
  return false;
}

}  // namespace rungs::model_json

namespace rungs::model {

// The one test of "is this a TF.js graph model" (load_model's dispatch on a .json path): an object
// with modelTopology and weightsManifest; a cheap search first, so a JSON description is parsed once.
bool is_tfjs_model(std::string_view json_text) {
  if (json_text.find("\"modelTopology\"") == std::string_view::npos) return false;
  try {
    const nlohmann::json j = nlohmann::json::parse(json_text);
    return j.is_object() && j.contains("modelTopology") && j.contains("weightsManifest");
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace rungs::model
