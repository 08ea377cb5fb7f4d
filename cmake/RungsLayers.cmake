# SPDX-License-Identifier: Apache-2.0
# The library's layers (docs/architecture.md): each is an OBJECT library whose objects are merged
# into the one installed static library `rungs`, and each sees only its own headers and those of
# the layers it declares.
#
# Sources include internal headers by their path from the repository root ("core/ir/graph_impl.hpp"),
# so the repository root is NOT an include directory of any layer. Instead each layer gets its own
# include root, build/layers/<layer>/, holding a symbolic link for each folder (or header) the
# layer owns, at the same relative path. A layer's include path is its own root plus the roots of
# the layers it depends on (CMake propagates them through the PUBLIC links below), so
# `#include "core/ir/graph_impl.hpp"` compiles in a layer that depends on rungs_ir and fails with
# "No such file or directory" in any other. tests/layers checks that it does fail.
#
# The public headers (core/include/rungs) are visible to every layer through rungs_api.
# Tests, benches, examples and the CLI are not layers: they may include anything.

add_library(rungs_api INTERFACE)
target_include_directories(rungs_api INTERFACE $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/core/include>)
target_compile_features(rungs_api INTERFACE cxx_std_20)
target_link_libraries(rungs_api INTERFACE Threads::Threads)

# rungs_layer(<target> OWNS <path>... [DEPS <target>...] [PRIVATE_DEPS <target>...]): an OBJECT
# library for one layer. OWNS: the folders and headers (relative to the repository root) the layer
# exposes to itself and its dependents. DEPS: the layers (and header-only libraries) it may
# include. Add sources with target_sources(<target> ...) or rungs_isa_source(<target> ...).
# COLD: the layer runs when a model is loaded or a graph compiled, never per run (parsing,
# tokenizing, IR building, passes); in WebAssembly it is compiled for size (-Oz), which keeps the
# npm package small (docs/building.md) at no measurable cost: the kernels and the executor, where a
# run spends its time, keep -O3. Not for a layer that moves a model's weights (model, import/onnx,
# import/tfjs): at -Oz libc++'s vector loops keep one out-of-line call per element, which with
# -fexceptions (the exception mode then) crossed into JS and back, and USE Lite's 27 MB took 1.5 s
# to load (docs/onnx.md).
function(rungs_layer name)
  cmake_parse_arguments(ARG "COLD" "" "OWNS;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(${name} OBJECT)
  if(ARG_COLD AND EMSCRIPTEN AND NOT CMAKE_BUILD_TYPE STREQUAL "Debug")
    target_compile_options(${name} PRIVATE -Oz)
  endif()
  set(root "${PROJECT_BINARY_DIR}/layers/${name}")
  foreach(path IN LISTS ARG_OWNS)
    if(NOT EXISTS "${PROJECT_SOURCE_DIR}/${path}")
      message(FATAL_ERROR "rungs_layer(${name}): ${path} does not exist")
    endif()
    get_filename_component(parent "${root}/${path}" DIRECTORY)
    file(MAKE_DIRECTORY "${parent}")
    file(CREATE_LINK "${PROJECT_SOURCE_DIR}/${path}" "${root}/${path}" SYMBOLIC)
  endforeach()
  set_property(TARGET ${name} PROPERTY RUNGS_LAYER_ROOT "${root}")
  target_include_directories(${name} PUBLIC $<BUILD_INTERFACE:${root}>)
  target_link_libraries(${name} PUBLIC rungs_api ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  # Merged into the installed library (objects only: `rungs` exports no link to the layers).
  target_sources(rungs PRIVATE $<TARGET_OBJECTS:${name}>)
  # For what walks the link graph (cmake/RungsNotices.cmake): `rungs` holds this layer's code.
  set_property(TARGET rungs APPEND PROPERTY RUNGS_LAYERS ${name})
endfunction()
