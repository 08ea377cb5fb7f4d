# SPDX-License-Identifier: Apache-2.0
# The ONNX classes the frontend parses ModelProto with (core/import/onnx/onnx_proto.hpp), on
# protobuf's lite runtime, natively and in WebAssembly (docs/onnx.md, "Protobuf runtime").
#
#   rungs_onnx_proto    OBJECT library: the classes protoc generates at build time from ONNX's
#                       onnx.proto (RUNGS_ONNX_PROTO, Debian's libonnx-dev copy by default) with
#                       `option optimize_for = LITE_RUNTIME`, linked to protobuf::libprotobuf-lite.
#                       Its objects are merged into `rungs` (RUNGS_LAYERS, like a layer's).
#   protobuf::libprotobuf-lite
#                       natively: Debian's libprotobuf-lite (FindProtobuf); under Emscripten: the
#                       lite runtime scripts/setup builds with em++ from Debian's source package of
#                       the same version into .deps/protobuf-wasm (.deps/protobuf-wasm-mt, built
#                       with -pthread, for the threaded variant) (imported here).
#
# protoc (the host's, Debian's protobuf-compiler) must be the runtime's version: generated code
# refuses to compile against another minor version, and this checks it first with a clear message.
# Sets for the install files: RUNGS_ONNX_INSTALL_LINKS, RUNGS_CONFIG_DEPENDENCIES,
# RUNGS_PC_ONNX_LIBS; and protobuf_VERSION / onnx_VERSION for the notices.
set(RUNGS_ONNX_PROTO "/usr/include/onnx/onnx.proto" CACHE FILEPATH
    "ONNX's onnx.proto, compiled with protoc into the lite classes (libonnx-dev ships it)")

if(EMSCRIPTEN)
  # The threaded variant links only objects built with atomics: a -pthread build of the runtime.
  if(RUNGS_WASM_THREADS)
    set(_pb_root "${RUNGS_DEPS_DIR}/protobuf-wasm-mt")
  else()
    set(_pb_root "${RUNGS_DEPS_DIR}/protobuf-wasm")
  endif()
  if(NOT EXISTS "${_pb_root}/lib/libprotobuf-lite.a" OR NOT EXISTS "${_pb_root}/.version")
    message(FATAL_ERROR "${_pb_root} is missing: run `bash scripts/setup` first (it builds "
                        "protobuf-lite with em++)")
  endif()
  file(STRINGS "${_pb_root}/.version" protobuf_VERSION LIMIT_COUNT 1)
  add_library(protobuf::libprotobuf-lite STATIC IMPORTED)
  set_target_properties(protobuf::libprotobuf-lite PROPERTIES
    IMPORTED_LOCATION "${_pb_root}/lib/libprotobuf-lite.a"
    INTERFACE_INCLUDE_DIRECTORIES "${_pb_root}/include")
else()
  find_package(Protobuf 3.21 REQUIRED)  # FindProtobuf: protobuf::libprotobuf-lite
  set(protobuf_VERSION "${Protobuf_VERSION}")
endif()

find_program(RUNGS_PROTOC protoc NO_CMAKE_FIND_ROOT_PATH)
if(NOT RUNGS_PROTOC)
  message(FATAL_ERROR "protoc not found: install protobuf-compiler (bash scripts/setup)")
endif()
execute_process(COMMAND "${RUNGS_PROTOC}" --version OUTPUT_VARIABLE _protoc_out
                OUTPUT_STRIP_TRAILING_WHITESPACE)
string(REGEX MATCH "[0-9]+\\.[0-9]+\\.[0-9]+" _protoc_version "${_protoc_out}")
string(REGEX MATCH "^[0-9]+\\.[0-9]+\\.[0-9]+" _runtime_version "${protobuf_VERSION}")
if(NOT _protoc_version VERSION_EQUAL _runtime_version)
  message(FATAL_ERROR "protoc ${_protoc_version} (${RUNGS_PROTOC}) does not match the protobuf "
                      "runtime ${protobuf_VERSION}: the generated classes need the same version "
                      "(rerun `bash scripts/setup` after upgrading protobuf-compiler)")
endif()

if(NOT EXISTS "${RUNGS_ONNX_PROTO}")
  message(FATAL_ERROR "${RUNGS_ONNX_PROTO} not found: install libonnx-dev (bash scripts/setup) "
                      "or set RUNGS_ONNX_PROTO")
endif()
execute_process(COMMAND dpkg-query -W -f=\${Version} libonnx-dev OUTPUT_VARIABLE onnx_VERSION
                ERROR_QUIET)

# The .proto protoc reads: ONNX's, with the lite option forced (Debian's copy already says
# LITE_RUNTIME; another copy may say SPEED or nothing). Rewritten only when it changes.
set(_gen "${PROJECT_BINARY_DIR}/generated/onnx_proto")
file(READ "${RUNGS_ONNX_PROTO}" _proto)
string(REGEX REPLACE "option[ \t]+optimize_for[ \t]*=[ \t]*[A-Z_]+[ \t]*;" "" _proto "${_proto}")
string(APPEND _proto "\n// Added by rungs (cmake/RungsProtobuf.cmake): the lite runtime.\n"
                     "option optimize_for = LITE_RUNTIME;\n")
file(WRITE "${_gen}/onnx.proto.tmp" "${_proto}")
configure_file("${_gen}/onnx.proto.tmp" "${_gen}/onnx_lite/onnx.proto" COPYONLY)
file(REMOVE "${_gen}/onnx.proto.tmp")
set_property(DIRECTORY "${PROJECT_SOURCE_DIR}" APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             "${RUNGS_ONNX_PROTO}")

add_custom_command(
  OUTPUT "${_gen}/onnx_lite/onnx.pb.cc" "${_gen}/onnx_lite/onnx.pb.h"
  COMMAND "${RUNGS_PROTOC}" "--proto_path=${_gen}" "--cpp_out=${_gen}" "${_gen}/onnx_lite/onnx.proto"
  DEPENDS "${_gen}/onnx_lite/onnx.proto" "${RUNGS_PROTOC}"
  COMMENT "protoc: ONNX's onnx.proto -> lite classes (onnx_lite/onnx.pb.h)"
  VERBATIM)

# ONNX's schema, compiled into the generated classes: a target only so the notices walk
# (cmake/RungsNotices.cmake) finds ONNX's licence (third_party/notices.json, "onnx").
add_library(rungs::onnx_schema INTERFACE IMPORTED)

add_library(rungs_onnx_proto OBJECT "${_gen}/onnx_lite/onnx.pb.cc")
# SYSTEM: the generated header is not ours; the frontend's warnings flags must not apply to it.
target_include_directories(rungs_onnx_proto SYSTEM PUBLIC $<BUILD_INTERFACE:${_gen}>)
target_link_libraries(rungs_onnx_proto PUBLIC protobuf::libprotobuf-lite rungs::onnx_schema)
target_compile_features(rungs_onnx_proto PUBLIC cxx_std_20)
if(EMSCRIPTEN AND NOT CMAKE_BUILD_TYPE STREQUAL "Debug")
  target_compile_options(rungs_onnx_proto PRIVATE -Oz)  # parsing is load-time code (COLD in RungsLayers.cmake)
endif()
target_compile_options(rungs_onnx_proto PRIVATE -w)
if(RUNGS_WASM_THREADS)  # made before cmake/RungsEmscripten.cmake adds -pthread to every target
  target_compile_options(rungs_onnx_proto PRIVATE -pthread)
endif()

# Merges the generated objects into `rungs` (called once `rungs` exists, core/CMakeLists.txt).
# `rungs` links the lite runtime publicly: every program that links rungs needs it, and the
# installed package finds it again (rungsConfig.cmake: find_dependency(Protobuf); rungs.pc).
function(rungs_merge_onnx_proto)
  target_sources(rungs PRIVATE $<TARGET_OBJECTS:rungs_onnx_proto>)
  set_property(TARGET rungs APPEND PROPERTY RUNGS_LAYERS rungs_onnx_proto)
  target_link_libraries(rungs PUBLIC protobuf::libprotobuf-lite)
endfunction()

set(RUNGS_ONNX_INSTALL_LINKS protobuf::libprotobuf-lite)
set(RUNGS_CONFIG_DEPENDENCIES "find_dependency(Protobuf 3.21)")
set(RUNGS_PC_ONNX_LIBS " -lprotobuf-lite")
