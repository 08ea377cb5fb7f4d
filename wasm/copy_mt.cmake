# SPDX-License-Identifier: Apache-2.0
# cmake -DFROM=<wasm-threads npm dir> -DTO=<this package> -P copy_mt.cmake: copies the threaded
# variant's files into the single-threaded build's package when the wasm-threads build made them
# (wasm/CMakeLists.txt); without them module.js loads the single-threaded variant everywhere.
foreach(f rungs_core_mt.js rungs_core_mt.wasm rungs_core_mt.worker.js rungs_core_mt.worker.cjs)
  if(EXISTS "${FROM}/${f}")
    file(COPY_FILE "${FROM}/${f}" "${TO}/${f}" ONLY_IF_DIFFERENT)
  elseif(EXISTS "${TO}/${f}")
    file(REMOVE "${TO}/${f}")
  endif()
endforeach()
