# SPDX-License-Identifier: Apache-2.0
# cpack: a .tar.gz and a Debian 12 .deb of what `cmake --install` writes (CLI, static library,
# headers, CMake package, pkg-config file, licence and notices).
#   cmake --build build/native-release && (cd build/native-release && cpack)
#   -> build/native-release/packages/rungs-<version>-Linux.tar.gz, rungs_<version>_<arch>.deb
# The .deb installs under /usr (DEB's default prefix); the .tar.gz holds the install tree under
# rungs-<version>-Linux/. tests/install/package_consumer.cmake unpacks both and builds against them.
set(CPACK_PACKAGE_NAME rungs)
set(CPACK_PACKAGE_VENDOR "The rungs authors")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_HOMEPAGE_URL "${PROJECT_HOMEPAGE_URL}")
set(CPACK_RESOURCE_FILE_LICENSE "${PROJECT_SOURCE_DIR}/LICENSE")
set(CPACK_PACKAGE_DIRECTORY "${PROJECT_BINARY_DIR}/packages")
set(CPACK_GENERATOR "TGZ;DEB")
set(CPACK_SOURCE_GENERATOR "")
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_PACKAGE_MAINTAINER "The rungs authors <rungs@localhost>")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # the CLI's libc6 / libstdc++6 / libgcc-s1, from dpkg-shlibdeps
if(RUNGS_ONNX)
  # The static library's link dependency (the ONNX frontend's protobuf-lite), for consumers.
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libprotobuf-dev (>= 3.21)")
endif()
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "${PROJECT_DESCRIPTION}
 rungs compiles ML compute graphs (MLPs, small transformer encoders) into
 xsimd-vectorized CPU kernels (SSE4.2, AVX2, AVX-512, picked at run time), with a
 bucketed compile cache for inputs whose size varies. This package holds the
 `rungs` command-line tool, the static library, its C++20 headers, the CMake
 package (find_package(rungs)) and a pkg-config file. Apache-2.0; the code it
 compiles in from xsimd, nlohmann_json and CLI11 is listed in
 /usr/share/doc/rungs/THIRD_PARTY_NOTICES.md.")
set(CPACK_ARCHIVE_COMPONENT_INSTALL OFF)

include(CPack)
