# SPDX-License-Identifier: Apache-2.0
# Included by install_consumer.cmake and package_consumer.cmake: builds pkgconfig/main.cpp against
# the rungs.pc under <prefix>/lib/pkgconfig with only the flags pkg-config prints, then runs it.
# Needs: step(), prefix, WORK_DIR, CXX_COMPILER, VERSION, and a name for the work folder (pc_name).
function(pkg_config_consumer prefix pc_name)
  find_program(PKG_CONFIG pkg-config REQUIRED)
  set(pc_dir "${prefix}/lib/pkgconfig")
  if(NOT EXISTS "${pc_dir}/rungs.pc")
    message(FATAL_ERROR "pkg-config: ${pc_dir}/rungs.pc is missing")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env "PKG_CONFIG_PATH=${pc_dir}" PKG_CONFIG_LIBDIR=/nonexistent
                          ${PKG_CONFIG} --cflags --libs rungs
                  OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env "PKG_CONFIG_PATH=${pc_dir}" PKG_CONFIG_LIBDIR=/nonexistent
                          ${PKG_CONFIG} --modversion rungs
                  OUTPUT_VARIABLE pc_version OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0 OR NOT pc_version STREQUAL VERSION)
    message(FATAL_ERROR "pkg-config: `pkg-config rungs` failed (${rc}) or gave version '${pc_version}', expected ${VERSION}")
  endif()
  message(STATUS "pkg-config --cflags --libs rungs: ${flags}")
  # The flags must point into the prefix (rungs.pc is relocatable), not to where it was built.
  if(NOT flags MATCHES "-I${prefix}/lib/pkgconfig/../../include" AND NOT flags MATCHES "-I${prefix}/include")
    message(FATAL_ERROR "pkg-config: cflags '${flags}' do not point into ${prefix}")
  endif()
  separate_arguments(flag_list UNIX_COMMAND "${flags}")
  set(out "${WORK_DIR}/${pc_name}")
  file(MAKE_DIRECTORY "${out}")
  step(${CXX_COMPILER} -std=c++20 -O1 "${CMAKE_CURRENT_LIST_DIR}/pkgconfig/main.cpp" ${flag_list}
       -o "${out}/pkgconfig_consumer")
  step("${out}/pkgconfig_consumer" "${VERSION}")
endfunction()
