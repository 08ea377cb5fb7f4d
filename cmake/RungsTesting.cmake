# SPDX-License-Identifier: Apache-2.0
# rungs_test_sources(file...): add GoogleTest sources to the single `rungs_tests` binary that
# tests/CMakeLists.txt builds. Kernel tests live beside their kernels (backends/cpu/<family>/)
# and register themselves with this function.
function(rungs_test_sources)
  foreach(src IN LISTS ARGN)
    get_filename_component(abs "${src}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    set_property(GLOBAL APPEND PROPERTY RUNGS_TEST_SOURCES "${abs}")
  endforeach()
endfunction()
