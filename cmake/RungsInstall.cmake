# SPDX-License-Identifier: Apache-2.0
# `cmake --install` layout, for consumers that do find_package(rungs CONFIG REQUIRED):
#   include/rungs/*.hpp                     the public headers (they include no dependency's header)
#   lib/librungs.a                          the static library
#   lib/cmake/rungs/rungsConfig.cmake       + rungsConfigVersion.cmake, rungsTargets*.cmake
#   bin/rungs                               the native CLI, when built
#   lib/pkgconfig/rungs.pc                  for pkg-config (relocatable: paths from ${pcfiledir})
#   share/doc/rungs/                        LICENSE, NOTICE, THIRD_PARTY_NOTICES.md, CHANGELOG.md,
#                                           copyright (Debian's format)
# The exported target is rungs::rungs, which merges the objects of every layer
# (cmake/RungsLayers.cmake). xsimd and nlohmann_json are private, header-only dependencies of
# some layers, never linked to `rungs` itself, so the package needs neither; Threads is public
# (the thread pool) and found by the config file.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(RUNGS_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/rungs")

set_target_properties(rungs PROPERTIES EXPORT_NAME rungs)
install(TARGETS rungs EXPORT rungsTargets
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/core/include/rungs"
  DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
  FILES_MATCHING PATTERN "*.hpp")
install(EXPORT rungsTargets
  NAMESPACE rungs::
  DESTINATION "${RUNGS_INSTALL_CMAKEDIR}")

configure_package_config_file(
  "${PROJECT_SOURCE_DIR}/cmake/rungsConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/rungsConfig.cmake"
  INSTALL_DESTINATION "${RUNGS_INSTALL_CMAKEDIR}")
# 0.x: a minor version bump may break the API, so only the same minor version is compatible.
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/rungsConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES
  "${PROJECT_BINARY_DIR}/rungsConfig.cmake"
  "${PROJECT_BINARY_DIR}/rungsConfigVersion.cmake"
  DESTINATION "${RUNGS_INSTALL_CMAKEDIR}")

if(TARGET rungs_cli)
  install(TARGETS rungs_cli RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
endif()

# pkg-config. The file finds its prefix from its own location, so the installed tree (or a .deb
# unpacked anywhere with dpkg -x) works where it lands. Threads is the only link dependency.
file(RELATIVE_PATH RUNGS_PC_TO_PREFIX "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
string(REGEX REPLACE "/$" "" RUNGS_PC_TO_PREFIX "${RUNGS_PC_TO_PREFIX}")
configure_file("${PROJECT_SOURCE_DIR}/cmake/rungs.pc.in" "${PROJECT_BINARY_DIR}/rungs.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/rungs.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")

# Licence, notices and changelog. THIRD_PARTY_NOTICES.md lists what the library and the CLI
# compile in (cmake/RungsNotices.cmake).
set(RUNGS_INSTALLED_ARTEFACTS rungs)
set(RUNGS_INSTALLED_AS "${CMAKE_INSTALL_LIBDIR}/librungs.a")
if(TARGET rungs_cli)
  list(APPEND RUNGS_INSTALLED_ARTEFACTS rungs_cli)
  list(APPEND RUNGS_INSTALLED_AS "${CMAKE_INSTALL_BINDIR}/rungs")
endif()
rungs_write_notices("${PROJECT_BINARY_DIR}/THIRD_PARTY_NOTICES.md"
  LABEL "rungs ${PROJECT_VERSION}, native library and CLI (cmake --install, .deb, .tar.gz)"
  TARGETS ${RUNGS_INSTALLED_ARTEFACTS} INTO ${RUNGS_INSTALLED_AS})
# copyright: Debian's machine-readable summary (/usr/share/doc/<package>/copyright in the .deb).
configure_file("${PROJECT_SOURCE_DIR}/cmake/copyright.in" "${PROJECT_BINARY_DIR}/copyright" @ONLY)
install(FILES
  "${PROJECT_SOURCE_DIR}/LICENSE"
  "${PROJECT_SOURCE_DIR}/NOTICE"
  "${PROJECT_SOURCE_DIR}/CHANGELOG.md"
  "${PROJECT_BINARY_DIR}/THIRD_PARTY_NOTICES.md"
  "${PROJECT_BINARY_DIR}/copyright"
  DESTINATION "${CMAKE_INSTALL_DOCDIR}")

include(cmake/RungsPackaging.cmake)
