# SPDX-License-Identifier: Apache-2.0
# Run by ctest (tests/install/CMakeLists.txt) with cmake -P: what a person does with the packages.
#  1. cpack makes the .deb and the .tar.gz from this build (cmake/RungsPackaging.cmake).
#  2. The .deb is unpacked into a scratch root with dpkg -x (no root rights, nothing installed on
#     the machine); its control fields name rungs and this version.
#  3. tests/install/consumer is built against <root>/usr with find_package(rungs), and run; the
#     pkg-config consumer is built against <root>/usr/lib/pkgconfig/rungs.pc, and run.
#  4. The packaged `rungs info` and `rungs --version` run and print this version.
#  5. The .tar.gz holds the same files as the .deb (under rungs-<version>-Linux/ instead of /usr).
set(STEP_LABEL package_consumer)
include("${CMAKE_CURRENT_LIST_DIR}/step.cmake")

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(packages "${WORK_DIR}/packages")
step(${CPACK_COMMAND} --config "${RUNGS_BUILD_DIR}/CPackConfig.cmake" -B "${packages}")  # TGZ and DEB
file(GLOB debs "${packages}/rungs_${VERSION}_*.deb")
file(GLOB tgzs "${packages}/rungs-${VERSION}-*.tar.gz")
list(LENGTH debs n_deb)
list(LENGTH tgzs n_tgz)
if(NOT n_deb EQUAL 1 OR NOT n_tgz EQUAL 1)
  message(FATAL_ERROR "package_consumer: expected one rungs_${VERSION}_*.deb and one rungs-${VERSION}-*.tar.gz in ${packages}, found '${debs}' and '${tgzs}'")
endif()

# 2. The .deb, unpacked.
execute_process(COMMAND dpkg-deb -f "${debs}" Package Version Depends License
                OUTPUT_VARIABLE control RESULT_VARIABLE rc)
message(STATUS "control fields:\n${control}")
if(NOT rc EQUAL 0 OR NOT control MATCHES "Package: rungs\n" OR NOT control MATCHES "Version: ${VERSION}\n"
   OR NOT control MATCHES "Depends: [^\n]*libc6")
  message(FATAL_ERROR "package_consumer: unexpected control fields")
endif()
set(root "${WORK_DIR}/root")
step(dpkg -x "${debs}" "${root}")
set(prefix "${root}/usr")
foreach(f bin/rungs include/rungs/rungs.hpp lib/librungs.a lib/cmake/rungs/rungsConfig.cmake
          lib/cmake/rungs/rungsConfigVersion.cmake lib/pkgconfig/rungs.pc
          share/doc/rungs/LICENSE share/doc/rungs/NOTICE share/doc/rungs/THIRD_PARTY_NOTICES.md
          share/doc/rungs/CHANGELOG.md share/doc/rungs/copyright)
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "package_consumer: /usr/${f} is missing from the .deb")
  endif()
endforeach()
file(READ "${prefix}/share/doc/rungs/THIRD_PARTY_NOTICES.md" packaged_notices)
file(READ "${RUNGS_BUILD_DIR}/THIRD_PARTY_NOTICES.md" built_notices)
if(NOT packaged_notices STREQUAL built_notices)
  message(FATAL_ERROR "package_consumer: the .deb's THIRD_PARTY_NOTICES.md is not the build's (checked by notices_native)")
endif()

# 3. Build against it: CMake package, then pkg-config.
step(${CMAKE_COMMAND} -S "${CONSUMER_SOURCE_DIR}" -B "${WORK_DIR}/consumer" -G "${GENERATOR}"
     "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
     "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}" -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON
     -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF)
step(${CMAKE_COMMAND} --build "${WORK_DIR}/consumer")
step("${WORK_DIR}/consumer/rungs_consumer")
include("${CMAKE_CURRENT_LIST_DIR}/pkg_config.cmake")
pkg_config_consumer("${prefix}" pkgconfig-deb)

# 4. The packaged CLI.
execute_process(COMMAND "${prefix}/bin/rungs" info OUTPUT_VARIABLE info RESULT_VARIABLE rc)
message(STATUS "packaged rungs info:\n${info}")
if(NOT rc EQUAL 0 OR NOT info MATCHES "^rungs ${VERSION}\n")
  message(FATAL_ERROR "package_consumer: the packaged `rungs info` failed (${rc}) or did not print 'rungs ${VERSION}'")
endif()
execute_process(COMMAND "${prefix}/bin/rungs" --version OUTPUT_VARIABLE cli_version
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT cli_version STREQUAL VERSION)
  message(FATAL_ERROR "package_consumer: packaged `rungs --version` printed '${cli_version}', expected ${VERSION}")
endif()

# 5. The .tar.gz: the same files.
set(tgz_root "${WORK_DIR}/tgz")
file(MAKE_DIRECTORY "${tgz_root}")
execute_process(COMMAND ${CMAKE_COMMAND} -E tar xzf "${tgzs}" WORKING_DIRECTORY "${tgz_root}" RESULT_VARIABLE rc)
file(GLOB tgz_top LIST_DIRECTORIES true "${tgz_root}/rungs-${VERSION}-*")
file(GLOB_RECURSE in_tgz RELATIVE "${tgz_top}" "${tgz_top}/*")
file(GLOB_RECURSE in_deb RELATIVE "${prefix}" "${prefix}/*")
list(SORT in_tgz)
list(SORT in_deb)
if(NOT rc EQUAL 0 OR NOT in_tgz STREQUAL in_deb)
  message(FATAL_ERROR "package_consumer: the .tar.gz holds\n  ${in_tgz}\nthe .deb holds\n  ${in_deb}")
endif()
step("${tgz_top}/bin/rungs" --version)
list(LENGTH in_deb n_files)
message(STATUS "package_consumer: .deb and .tar.gz of rungs ${VERSION}, ${n_files} files each, consumed")
