# SPDX-License-Identifier: Apache-2.0
# FindCsv: libcsv (Debian's libcsv-dev), the CSV writer of the native CLI. It ships no CMake or
# pkg-config file, so this finds its header and library and defines the imported target Csv::csv.
find_path(Csv_INCLUDE_DIR csv.h)
find_library(Csv_LIBRARY NAMES csv)  # shared: libcsv is LGPL-2.1+, so the CLI links it dynamically (the .deb depends on libcsv3)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Csv REQUIRED_VARS Csv_LIBRARY Csv_INCLUDE_DIR)
if(Csv_FOUND AND NOT TARGET Csv::csv)
  add_library(Csv::csv UNKNOWN IMPORTED)
  set_target_properties(Csv::csv PROPERTIES IMPORTED_LOCATION "${Csv_LIBRARY}"
                                            INTERFACE_INCLUDE_DIRECTORIES "${Csv_INCLUDE_DIR}")
endif()
mark_as_advanced(Csv_INCLUDE_DIR Csv_LIBRARY)
