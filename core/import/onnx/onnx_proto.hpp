// SPDX-License-Identifier: Apache-2.0
// core/import/onnx/onnx_proto.hpp: the one place the frontend reaches the ONNX protobuf classes.
//
// Today: Debian's libonnx-dev (the generated onnx-ml classes; ONNX_ML=1 and ONNX_NAMESPACE=onnx
// come from its CMake target). The frontend uses only accessors the protobuf lite runtime has
// too (no reflection, no TextFormat, no DebugString), so this header can switch to lite classes
// generated from onnx.proto without touching the frontend.
#pragma once

#include <onnx/onnx_pb.h>

namespace rungs::onnx_import {
namespace pb = ::onnx;
}
