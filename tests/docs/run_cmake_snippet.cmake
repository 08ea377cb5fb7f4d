# SPDX-License-Identifier: Apache-2.0
# Run by ctest (tests/docs/CMakeLists.txt) with cmake -P: installs this build into a scratch prefix
# and builds a project whose CMakeLists.txt is a documented ```cmake snippet after the lines every
# project starts with, against that prefix only.
set(STEP_LABEL "doc snippet ${SNIPPET}")
include("${CMAKE_CURRENT_LIST_DIR}/../install/step.cmake")

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
step(${CMAKE_COMMAND} --install "${RUNGS_BUILD_DIR}" --prefix "${prefix}")
file(READ "${SNIPPET}" snippet)
file(WRITE "${WORK_DIR}/project/CMakeLists.txt"
  "cmake_minimum_required(VERSION 3.21)\nproject(snippet LANGUAGES CXX)\nadd_executable(app main.cpp)\n${snippet}")
file(WRITE "${WORK_DIR}/project/main.cpp"
  "#include <rungs/rungs.hpp>\n#include <cstdio>\nint main() { std::printf(\"rungs %s\\n\", std::string(rungs::version()).c_str()); }\n")
step(${CMAKE_COMMAND} -S "${WORK_DIR}/project" -B "${WORK_DIR}/build" -G "${GENERATOR}"
     "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
     "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${EXE_LINKER_FLAGS}"
     "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}" -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON)
step(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
step("${WORK_DIR}/build/app")
