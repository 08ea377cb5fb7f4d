// SPDX-License-Identifier: Apache-2.0
// core/model/safetensors.hpp: the .safetensors container (https://github.com/huggingface/safetensors).
//
//   [8 bytes: header length N, little-endian u64][N bytes: JSON header][raw little-endian data]
//   header: {"<tensor>": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...,
//            "__metadata__": {"key": "value", ...}}      (offsets relative to the data start)
//
// Why a reader of our own: it is ~300 lines, and it has to refuse every malformed input with a
// message naming the file, the tensor and what was expected, without reading out of bounds or
// allocating more than the input could hold. F32, BF16 and F16 are read; values come out as f32.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rungs/model.hpp"
#include "rungs/types.hpp"

namespace rungs::safetensors {

// Limits checked before anything is allocated.
constexpr uint64_t kMaxHeaderBytes = 100u << 20;  // the reference implementation's limit
constexpr int kMaxRank = 8;
constexpr int64_t kMaxDim = int64_t{1} << 40;

struct Tensor {
  std::string name;
  TensorDType dtype = TensorDType::F32;  // stored format (read) or format to store (write)
  Shape shape;
  std::vector<float> data;  // shape_numel(shape) values
};

struct File {
  std::vector<Tensor> tensors;  // in data order (by begin offset)
  std::map<std::string, std::string> metadata;

  const Tensor* find(std::string_view name) const;
};

size_t dtype_size(TensorDType dtype);

// `source` names the bytes in error messages (a file path, or e.g. "encoder.safetensors").
File read(std::span<const uint8_t> bytes, std::string_view source);
File read_file(const std::string& path);

// Encodes tensors in the order given, each in its own dtype, with the header padded to a multiple
// of 8 bytes (so the data starts aligned). Throws Error(InvalidArgument) for a duplicate or empty
// name, or data whose size does not match its shape.
std::vector<uint8_t> write(std::span<const Tensor> tensors,
                           const std::map<std::string, std::string>& metadata = {});
void write_file(const std::string& path, std::span<const Tensor> tensors,
                const std::map<std::string, std::string>& metadata = {});

// Whole-file helpers shared with the model loader (Error(ParseError) naming the path).
std::vector<uint8_t> read_bytes(const std::string& path, uint64_t max_bytes);
void write_bytes(const std::string& path, std::span<const uint8_t> bytes);

}  // namespace rungs::safetensors
