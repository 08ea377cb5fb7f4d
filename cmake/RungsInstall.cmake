# `cmake --install` layout, for consumers that do find_package(rungs CONFIG REQUIRED):
#   include/rungs/*.hpp                     the public headers (they include no dependency's header)
#   lib/librungs.a                          the static library
#   lib/cmake/rungs/rungsConfig.cmake       + rungsConfigVersion.cmake, rungsTargets*.cmake
#   bin/rungs                               the native CLI, when built
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
