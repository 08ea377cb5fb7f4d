// SPDX-License-Identifier: Apache-2.0
// core/model/frontend.hpp: the seam between Model and the file formats it reads.
//
// A Model holds one immutable Frontend (shared between copies): the thing that knows the format
// and builds the HirModule at an extent. Everything else a Model offers (params found by building
// at two probe extents, layouts along the bucket dim, cache inputs, synthetic inputs, weights) is
// format-independent and lives in core/model/model.cpp.
//
//   - JSON descriptions (docs/model-format.md): JsonFrontend, in core/model/model.cpp.
//   - ONNX files (docs/onnx.md): the rungs_import_onnx layer (core/import/onnx) implements
//     load_onnx below. That layer depends on this one, not the other way round: core/model only
//     declares load_onnx, and a build without the layer (RUNGS_ONNX=OFF) links
//     core/model/onnx_absent.cpp instead, whose load_onnx refuses with Error(Unsupported).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rungs/hir.hpp"
#include "rungs/model.hpp"
#include "rungs/types.hpp"

namespace rungs::model {

constexpr uint64_t kMaxOnnxBytes = uint64_t{2} << 30;  // protobuf's own limit: 2 GiB

class Frontend {
 public:
  virtual ~Frontend() = default;

  virtual std::string_view format() const = 0;  // "json", "onnx": for messages
  virtual const std::string& name() const = 0;
  virtual const std::string& bucket_dim() const = 0;  // empty: fully static shapes
  virtual const std::string& description() const = 0;
  // Inputs (declaration order) with the bucket dim set to `extent`, and their declared types.
  virtual std::vector<ModelInput> inputs(int64_t extent) const = 0;
  virtual std::vector<std::string> output_names() const = 0;
  virtual std::vector<ElementType> output_types() const = 0;
  // The module at `extent` (1 when there is no bucket dim). Errors name the file, the place in it
  // and the extent.
  virtual HirModule build(int64_t extent) const = 0;
  // What each input feeds (InputRole::Ids: with the smallest vocab it indexes, else 0).
  struct Role {
    InputRole role = InputRole::Values;
    uint64_t vocab = 0;
  };
  virtual std::vector<Role> input_roles() const = 0;
  // Where param `name` comes from, for messages: "created by blocks[3] (linear 'l0')".
  virtual std::string param_origin(const std::string& name) const = 0;
};

// What load_onnx hands back: the frontend, the values of every weight it may create (a superset
// of the params a build creates) and how each was stored in the file.
struct LoadedFrontend {
  std::shared_ptr<const Frontend> frontend;
  ParamMap weights;
  std::map<std::string, TensorDType> stored;
};

// Reads an ONNX ModelProto (docs/onnx.md). `source` names the file in messages; `base_dir` is the
// folder external-data files are read from when LoadOptions::external_data lacks them (empty: no
// file system, as for bytes from a browser). Throws Error(ParseError) for a malformed file,
// Error(Unsupported) for an op, opset or type rungs does not support, naming the node at fault.
LoadedFrontend load_onnx(std::span<const uint8_t> bytes, const LoadOptions& options, const std::string& source,
                         const std::string& base_dir);

// TF.js graph models (docs/tfjs.md), defined by the rungs_import_tfjs layer (core/import/tfjs), or
// refused by core/model/tfjs_absent.cpp in a build without the ONNX frontend it reuses.
// `read_shard(i, path)` returns the bytes of the i-th shard the weightsManifest lists (in order,
// across groups), named `path` there.
using ShardReader = std::function<std::vector<uint8_t>(size_t index, const std::string& path)>;
bool is_tfjs_model(std::string_view json_text);  // an object with modelTopology and weightsManifest
LoadedFrontend load_tfjs(std::string_view json_text, const ShardReader& read_shard, const LoadOptions& options,
                         const std::string& source);

}  // namespace rungs::model
