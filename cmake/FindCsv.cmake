# SPDX-License-Identifier: Apache-2.0
# FindCsv: libcsv (Debian's libcsv-dev), the CSV writer of the native CLI. It ships no CMake or
# pkg-config file, so this finds its header and library and defines the imported target Csv::csv.
find_path(Csv_INCLUDE_DIR csv.h)
find_library(Csv_LIBRARY NAMES csv)  # shared: libcsv is LGPL-2.1+, so the CLI links it dynamically (the .deb depends on libcsv3)
if(Csv_INCLUDE_DIR AND EXISTS "${Csv_INCLUDE_DIR}/csv.h")
  file(STRINGS "${Csv_INCLUDE_DIR}/csv.h" csv_defines REGEX "^#define CSV_(MAJOR|MINOR|RELEASE) ")
  foreach(part MAJOR MINOR RELEASE)
    string(REGEX REPLACE ".*#define CSV_${part} ([0-9]+).*" "\\1" csv_${part} "${csv_defines}")
  endforeach()
  set(Csv_VERSION "${csv_MAJOR}.${csv_MINOR}.${csv_RELEASE}")
  set(libcsv_VERSION "${Csv_VERSION}")  # the name third_party/notices.json gives it
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Csv REQUIRED_VARS Csv_LIBRARY Csv_INCLUDE_DIR VERSION_VAR Csv_VERSION)
if(Csv_FOUND AND NOT TARGET Csv::csv)
  add_library(Csv::csv UNKNOWN IMPORTED)
  set_target_properties(Csv::csv PROPERTIES IMPORTED_LOCATION "${Csv_LIBRARY}"
                                            INTERFACE_INCLUDE_DIRECTORIES "${Csv_INCLUDE_DIR}")
endif()
mark_as_advanced(Csv_INCLUDE_DIR Csv_LIBRARY)
