# SPDX-License-Identifier: Apache-2.0
# Run by ctest (tests/install/CMakeLists.txt) with cmake -P. Every step must succeed.
# Builds tests/install/consumer with find_package(rungs), then pkgconfig/main.cpp with pkg-config.
set(STEP_LABEL install_consumer)
include("${CMAKE_CURRENT_LIST_DIR}/step.cmake")

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")

step(${CMAKE_COMMAND} --install "${RUNGS_BUILD_DIR}" --prefix "${prefix}")
foreach(f include/rungs/rungs.hpp include/rungs/graph.hpp lib/librungs.a
          lib/cmake/rungs/rungsConfig.cmake lib/cmake/rungs/rungsConfigVersion.cmake
          lib/cmake/rungs/rungsTargets.cmake lib/pkgconfig/rungs.pc
          share/doc/rungs/LICENSE share/doc/rungs/NOTICE share/doc/rungs/THIRD_PARTY_NOTICES.md
          share/doc/rungs/CHANGELOG.md)
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "install_consumer: ${f} is missing from the installed package")
  endif()
endforeach()

# The consumer sees only the prefix: no source tree, no .deps (xsimd) on its paths.
step(${CMAKE_COMMAND} -S "${CONSUMER_SOURCE_DIR}" -B "${WORK_DIR}/build" -G "${GENERATOR}"
     "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
     "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${EXE_LINKER_FLAGS}"
     "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}" -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON)
step(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
step("${WORK_DIR}/build/rungs_consumer")

# The same prefix through pkg-config (lib/pkgconfig/rungs.pc) and a bare compiler command.
include("${CMAKE_CURRENT_LIST_DIR}/pkg_config.cmake")
pkg_config_consumer("${prefix}" pkgconfig)
