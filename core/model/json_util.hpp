// SPDX-License-Identifier: Apache-2.0
// core/model/json_util.hpp: strict JSON parsing shared by the safetensors header and model files.
// Internal: nlohmann-json stays out of the public headers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace rungs::model_json {

// Parses `text` as one JSON value and refuses duplicate keys in any object (nlohmann would keep
// the last one silently). Throws Error(ParseError) "<source>: <what>: invalid JSON: ...".
nlohmann::json parse_strict(std::string_view text, std::string_view source, std::string_view what);

// "object", "array", "string", "integer", "number", "boolean" or "null", for messages.
std::string kind(const nlohmann::json& j);

// A short, safe rendering of a JSON value for messages (truncated, never huge).
std::string preview(const nlohmann::json& j);

// A JSON integer that fits in int64 (an unsigned beyond int64, or any float such as 4.0, is not).
bool as_int64(const nlohmann::json& j, int64_t& out);

}  // namespace rungs::model_json
