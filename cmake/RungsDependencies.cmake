# SPDX-License-Identifier: Apache-2.0
# Every dependency through find_package, natively and under Emscripten.
#
# Natively: the system's packages (Debian 12), plus xsimd 13.2 headers that scripts/setup fetched
# into .deps/xsimd (Debian 12's xsimd 8.1 has no wasm architecture).
#
# Under Emscripten the toolchain file re-roots every package search into the Emscripten sysroot
# (CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY), so a plain CMAKE_PREFIX_PATH entry is ignored. Each
# project-local prefix is therefore added as a find *root*: CMake searches <root>/share/cmake/<pkg>,
# <root>/lib/cmake/<pkg>, ... inside it. Nothing from the host's /usr/include reaches the wasm
# include path: scripts/setup copies nlohmann_json's headers into .deps/nlohmann_json and builds
# GoogleTest with em++ into .deps/googletest-wasm.
set(RUNGS_DEPS_DIR "${PROJECT_SOURCE_DIR}/.deps" CACHE PATH "Project-local dependencies (scripts/setup)")

if(EMSCRIPTEN)
  # The threaded variant needs a GoogleTest compiled with -pthread (cmake/RungsEmscripten.cmake).
  set(_rungs_gtest googletest-wasm)
  if(RUNGS_WASM_THREADS)
    set(_rungs_gtest googletest-wasm-mt)
  endif()
  foreach(prefix xsimd/usr nlohmann_json ${_rungs_gtest})
    if(NOT EXISTS "${RUNGS_DEPS_DIR}/${prefix}")
      message(FATAL_ERROR "${RUNGS_DEPS_DIR}/${prefix} is missing: run `bash scripts/setup` first")
    endif()
    list(APPEND CMAKE_FIND_ROOT_PATH "${RUNGS_DEPS_DIR}/${prefix}")
  endforeach()
else()
  if(NOT EXISTS "${RUNGS_DEPS_DIR}/xsimd/usr")
    message(FATAL_ERROR "${RUNGS_DEPS_DIR}/xsimd is missing: run `bash scripts/setup` first")
  endif()
  list(APPEND CMAKE_PREFIX_PATH "${RUNGS_DEPS_DIR}/xsimd/usr")
endif()

find_package(Threads REQUIRED)
find_package(xsimd 13 CONFIG REQUIRED)
find_package(nlohmann_json 3.11 CONFIG REQUIRED)
if(RUNGS_BUILD_CLI AND NOT EMSCRIPTEN)
  find_package(CLI11 2 CONFIG REQUIRED)
  list(APPEND CMAKE_MODULE_PATH "${CMAKE_CURRENT_LIST_DIR}")
  find_package(Csv REQUIRED)  # libcsv-dev: cmake/FindCsv.cmake
endif()
# The ONNX frontend's protobuf classes (core/import/onnx/onnx_proto.hpp): the lite classes
# generated from onnx.proto over protobuf-lite, both targets (cmake/RungsProtobuf.cmake).
if(RUNGS_ONNX AND NOT TARGET rungs_onnx_proto)
  include("${CMAKE_CURRENT_LIST_DIR}/RungsProtobuf.cmake")
endif()
# GoogleTest is found in tests/CMakeLists.txt (FindGTest tries GTestConfig.cmake first, which
# under Emscripten is the em++ build in .deps/googletest-wasm).
