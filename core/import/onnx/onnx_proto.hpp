// SPDX-License-Identifier: Apache-2.0
// core/import/onnx/onnx_proto.hpp: the one place the frontend reaches the ONNX protobuf classes.
//
// They are generated at build time by protoc from ONNX's onnx.proto with
// `option optimize_for = LITE_RUNTIME` and run on protobuf's lite runtime, natively (Debian's
// libprotobuf-lite) and in WebAssembly (protobuf-lite built with em++ by scripts/setup): the
// CMake target rungs_onnx_proto (cmake/RungsProtobuf.cmake). The lite classes have the accessors,
// ParseFromArray / ParseFromString and SerializeToString, but no reflection, TextFormat or
// DebugString: the frontend uses none of those.
#pragma once

#include <onnx_lite/onnx.pb.h>

namespace rungs::onnx_import {
namespace pb = ::onnx;
}
