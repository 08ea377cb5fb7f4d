# SPDX-License-Identifier: Apache-2.0
# cmake -DDIR=<folder> -P includes_no_ir.cmake: fails when a source or header under DIR includes an
# IR header (core/ir/...). The layer probes cover the library's layers; this covers what is not a
# layer but lives in one's folder (backends/: the kernel tests, benchmarks and test helpers, which
# the build compiles with the repository root on their include path).
file(GLOB_RECURSE files "${DIR}/*.cpp" "${DIR}/*.hpp" "${DIR}/*.in")
set(found "")
foreach(f IN LISTS files)
  file(STRINGS "${f}" hits REGEX "#include[ \t]*[\"<]core/ir/")
  if(hits)
    list(APPEND found "${f}: ${hits}")
  endif()
endforeach()
list(LENGTH files n)
if(n EQUAL 0)
  message(FATAL_ERROR "includes_no_ir: no sources under ${DIR}")
endif()
if(found)
  list(JOIN found "\n" text)
  message(FATAL_ERROR "includes_no_ir: IR headers included under ${DIR}:\n${text}")
endif()
message(STATUS "includes_no_ir: ${n} files under ${DIR}, none includes core/ir/")
