// SPDX-License-Identifier: Apache-2.0
// core/model/safetensors.cpp: reading and writing .safetensors files (F32, BF16, F16).
#include "core/model/safetensors.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>

#include "core/check.hpp"
#include "core/model/json_util.hpp"
#include "core/numeric/half.hpp"

namespace rungs::safetensors {
namespace {

using nlohmann::json;

[[noreturn]] void parse_fail(std::string_view source, const std::string& what) {
  fail(ErrorCode::ParseError, std::string(source) + ": " + what);
}

uint64_t load_le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

bool parse_dtype(std::string_view s, TensorDType& out) {
  if (s == "F32") out = TensorDType::F32;
  else if (s == "BF16") out = TensorDType::BF16;
  else if (s == "F16") out = TensorDType::F16;
  else return false;
  return true;
}

struct Entry {
  std::string name;
  TensorDType dtype;
  Shape shape;
  uint64_t begin, end;
};

std::string range_text(uint64_t b, uint64_t e) {
  return "[" + std::to_string(b) + ", " + std::to_string(e) + ")";
}

Entry parse_entry(std::string_view source, const std::string& name, const json& j, uint64_t data_size) {
  const std::string where = "tensor '" + name + "'";
  if (!j.is_object()) parse_fail(source, where + ": expected an object, got " + model_json::kind(j));
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() != "dtype" && it.key() != "shape" && it.key() != "data_offsets") {
      parse_fail(source, where + ": unknown field '" + it.key() + "' (expected dtype, shape, data_offsets)");
    }
  }
  Entry e{name, TensorDType::F32, {}, 0, 0};

  auto dt = j.find("dtype");
  if (dt == j.end()) parse_fail(source, where + ": missing field 'dtype'");
  if (!dt->is_string()) parse_fail(source, where + ".dtype: expected a string, got " + model_json::kind(*dt));
  if (!parse_dtype(dt->get_ref<const std::string&>(), e.dtype)) {
    parse_fail(source, where + ".dtype: unsupported dtype " + model_json::preview(*dt) +
                           ", expected \"F32\", \"BF16\" or \"F16\"");
  }

  auto sh = j.find("shape");
  if (sh == j.end()) parse_fail(source, where + ": missing field 'shape'");
  if (!sh->is_array()) parse_fail(source, where + ".shape: expected an array, got " + model_json::kind(*sh));
  if (sh->size() > static_cast<size_t>(kMaxRank)) {
    parse_fail(source, where + ".shape: rank " + std::to_string(sh->size()) + " exceeds the maximum " +
                           std::to_string(kMaxRank));
  }
  uint64_t numel = 1;
  for (size_t i = 0; i < sh->size(); ++i) {
    int64_t d = -1;
    if (!model_json::as_int64((*sh)[i], d) || d < 0 || d > kMaxDim) {
      parse_fail(source, where + ".shape[" + std::to_string(i) + "]: expected an integer in [0, 2^40], got " +
                             model_json::preview((*sh)[i]));
    }
    e.shape.push_back(d);
    // Any product past the data size is wrong; stop before it can overflow.
    if (d != 0 && numel > data_size / static_cast<uint64_t>(d) + 1) numel = data_size + 1;
    else numel *= static_cast<uint64_t>(d);
  }
  for (int64_t d : e.shape) {
    if (d == 0) numel = 0;
  }

  auto off = j.find("data_offsets");
  if (off == j.end()) parse_fail(source, where + ": missing field 'data_offsets'");
  int64_t b = -1, en = -1;
  if (!off->is_array() || off->size() != 2 || !model_json::as_int64((*off)[0], b) ||
      !model_json::as_int64((*off)[1], en) || b < 0 || en < 0) {
    parse_fail(source, where + ".data_offsets: expected [begin, end], two non-negative integers, got " +
                           model_json::preview(*off));
  }
  e.begin = static_cast<uint64_t>(b);
  e.end = static_cast<uint64_t>(en);
  if (e.begin > e.end || e.end > data_size) {
    parse_fail(source, where + ".data_offsets: " + range_text(e.begin, e.end) +
                           " is outside the data section [0, " + std::to_string(data_size) +
                           ") (a truncated file?)");
  }
  const uint64_t want_bytes = numel > data_size ? data_size + 1 : numel * dtype_size(e.dtype);
  if (numel > data_size || want_bytes != e.end - e.begin) {
    parse_fail(source, where + ": shape " + shape_to_string(e.shape) + " of " + std::string(to_string(e.dtype)) +
                           " needs " + (numel > data_size ? std::string("more than the whole data section")
                                                         : std::to_string(want_bytes) + " bytes") +
                           ", but data_offsets " + range_text(e.begin, e.end) + " hold " +
                           std::to_string(e.end - e.begin));
  }
  return e;
}

void decode(const uint8_t* p, Tensor& t) {
  const size_t n = t.data.size();
  switch (t.dtype) {
    case TensorDType::F32:
      for (size_t i = 0; i < n; ++i, p += 4) {
        uint32_t u = static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
                     static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
        t.data[i] = numeric::bits_float(u);
      }
      break;
    case TensorDType::BF16:
      for (size_t i = 0; i < n; ++i, p += 2) {
        t.data[i] = numeric::bf16_to_f32(static_cast<uint16_t>(p[0] | p[1] << 8));
      }
      break;
    case TensorDType::F16:
      for (size_t i = 0; i < n; ++i, p += 2) {
        t.data[i] = numeric::f16_to_f32(static_cast<uint16_t>(p[0] | p[1] << 8));
      }
      break;
  }
}

void encode(const Tensor& t, std::vector<uint8_t>& out) {
  for (float f : t.data) {
    uint32_t u = 0;
    int bytes = 4;
    switch (t.dtype) {
      case TensorDType::F32: u = numeric::float_bits(f); break;
      case TensorDType::BF16: u = numeric::f32_to_bf16(f); bytes = 2; break;
      case TensorDType::F16: u = numeric::f32_to_f16(f); bytes = 2; break;
    }
    for (int k = 0; k < bytes; ++k) out.push_back(static_cast<uint8_t>(u >> (8 * k)));
  }
}

}  // namespace

size_t dtype_size(TensorDType dtype) { return dtype == TensorDType::F32 ? 4 : 2; }

const Tensor* File::find(std::string_view name) const {
  for (const Tensor& t : tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

File read(std::span<const uint8_t> bytes, std::string_view source) {
  const uint64_t size = bytes.size();
  if (size < 8) {
    parse_fail(source, "truncated: " + std::to_string(size) +
                           " bytes, but a safetensors file starts with an 8-byte header length");
  }
  const uint64_t header_len = load_le64(bytes.data());
  if (header_len > kMaxHeaderBytes) {
    parse_fail(source, "header length " + std::to_string(header_len) + " exceeds the limit of " +
                           std::to_string(kMaxHeaderBytes) + " bytes (not a safetensors file?)");
  }
  if (header_len > size - 8) {
    parse_fail(source, "truncated: the header length says " + std::to_string(header_len) +
                           " bytes of JSON, but only " + std::to_string(size - 8) + " bytes follow");
  }
  const auto* hp = reinterpret_cast<const char*>(bytes.data() + 8);
  const std::string_view header_text(hp, static_cast<size_t>(header_len));
  if (header_text.empty() || header_text.front() != '{') {
    parse_fail(source, "header: expected a JSON object starting with '{'");
  }
  const json header = model_json::parse_strict(header_text, source, "header");
  if (!header.is_object()) parse_fail(source, "header: expected a JSON object, got " + model_json::kind(header));

  const uint64_t data_size = size - 8 - header_len;
  const uint8_t* data = bytes.data() + 8 + header_len;

  File file;
  std::vector<Entry> entries;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (!it->is_object()) parse_fail(source, "__metadata__: expected an object of strings");
      for (auto m = it->begin(); m != it->end(); ++m) {
        if (!m->is_string()) {
          parse_fail(source, "__metadata__." + m.key() + ": expected a string, got " + model_json::kind(*m));
        }
        file.metadata[m.key()] = m->get<std::string>();
      }
      continue;
    }
    if (it.key().empty()) parse_fail(source, "header: a tensor has an empty name");
    entries.push_back(parse_entry(source, it.key(), *it, data_size));
  }

  // The data section must be covered exactly: no overlap, no hole, nothing after the last tensor.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t covered = 0;
  const Entry* prev = nullptr;
  for (const Entry& e : entries) {
    if (e.begin < covered) {
      parse_fail(source, "tensors '" + prev->name + "' " + range_text(prev->begin, prev->end) + " and '" + e.name +
                             "' " + range_text(e.begin, e.end) + " overlap");
    }
    if (e.begin > covered) {
      parse_fail(source, "data bytes " + range_text(covered, e.begin) + " before tensor '" + e.name +
                             "' belong to no tensor");
    }
    covered = e.end;
    if (e.end > e.begin) prev = &e;
  }
  if (covered != data_size) {
    parse_fail(source, "data bytes " + range_text(covered, data_size) + " after the last tensor belong to no tensor");
  }

  // Every size is now bounded by the input's own size: allocating is safe.
  file.tensors.reserve(entries.size());
  for (const Entry& e : entries) {
    Tensor t;
    t.name = e.name;
    t.dtype = e.dtype;
    t.shape = e.shape;
    t.data.resize(static_cast<size_t>((e.end - e.begin) / dtype_size(e.dtype)));
    decode(data + e.begin, t);
    file.tensors.push_back(std::move(t));
  }
  return file;
}

std::vector<uint8_t> read_bytes(const std::string& path, uint64_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) parse_fail(path, "cannot open the file (does it exist?)");
  in.seekg(0, std::ios::end);
  const std::streamoff end = in.tellg();
  if (end < 0) parse_fail(path, "cannot read the file size");
  const uint64_t size = static_cast<uint64_t>(end);
  if (size > max_bytes || size > std::numeric_limits<size_t>::max()) {
    parse_fail(path, "file of " + std::to_string(size) + " bytes exceeds the limit of " + std::to_string(max_bytes));
  }
  in.seekg(0, std::ios::beg);
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  if (size > 0 && !in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size))) {
    parse_fail(path, "read failed after " + std::to_string(in.gcount()) + " of " + std::to_string(size) + " bytes");
  }
  return bytes;
}

void write_bytes(const std::string& path, std::span<const uint8_t> bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) fail(ErrorCode::InvalidArgument, path + ": cannot open the file for writing");
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  out.flush();
  if (!out) fail(ErrorCode::InvalidArgument, path + ": write failed");
}

File read_file(const std::string& path) {
  // A weights file above 4 GiB is refused (and the wasm build cannot address it anyway).
  return read(read_bytes(path, uint64_t{4} << 30), path);
}

std::vector<uint8_t> write(std::span<const Tensor> tensors, const std::map<std::string, std::string>& metadata) {
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::set<std::string_view> names;
  uint64_t offset = 0;
  for (const Tensor& t : tensors) {
    if (t.name.empty() || t.name == "__metadata__") {
      fail(ErrorCode::InvalidArgument, "safetensors write: invalid tensor name '" + t.name + "'");
    }
    if (!names.insert(t.name).second) {
      fail(ErrorCode::InvalidArgument, "safetensors write: duplicate tensor name '" + t.name + "'");
    }
    for (int64_t d : t.shape) {
      if (d < 0) fail(ErrorCode::InvalidArgument, "safetensors write: tensor '" + t.name + "' has negative dim in " +
                                                      shape_to_string(t.shape));
    }
    if (static_cast<uint64_t>(shape_numel(t.shape)) != t.data.size()) {
      fail(ErrorCode::InvalidArgument, "safetensors write: tensor '" + t.name + "' has " +
                                           std::to_string(t.data.size()) + " values, shape " +
                                           shape_to_string(t.shape) + " needs " +
                                           std::to_string(shape_numel(t.shape)));
    }
    const uint64_t bytes = t.data.size() * dtype_size(t.dtype);
    header[t.name] = {{"dtype", std::string(to_string(t.dtype))},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  while ((8 + text.size()) % 8 != 0) text.push_back(' ');

  std::vector<uint8_t> out;
  out.reserve(8 + text.size() + offset);
  const uint64_t n = text.size();
  for (int k = 0; k < 8; ++k) out.push_back(static_cast<uint8_t>(n >> (8 * k)));
  out.insert(out.end(), text.begin(), text.end());
  for (const Tensor& t : tensors) encode(t, out);
  return out;
}

void write_file(const std::string& path, std::span<const Tensor> tensors,
                const std::map<std::string, std::string>& metadata) {
  write_bytes(path, write(tensors, metadata));
}

}  // namespace rungs::safetensors
