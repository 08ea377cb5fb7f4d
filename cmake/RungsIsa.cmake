# SPDX-License-Identifier: Apache-2.0
# rungs_isa_source(<target> <source> <isa> [SANITIZE_LIGHT]): add one translation unit to <target>
# (a layer, cmake/RungsLayers.cmake), compiled with only that ISA's flags. isa is one of sse42, avx2, avx512, wasm.
# SANITIZE_LIGHT marks a TU whose fully unrolled templates make g++'s sanitizer instrumentation
# pathological (the GEMM micro-kernels: over 20 minutes and 5 GB each at -O2 -g with ASan+UBSan,
# against 10 s without). In a g++ sanitizer build such a TU keeps ASan / TSan but is compiled at
# -O1 without debug info and without UBSan (about 2 minutes); its results are still checked
# against the scalar reference by the kernel tests, and clang's fuzz build instruments it fully. Under Emscripten, x86 sources are left out of the build
# and wasm sources get -msimd128; natively, wasm sources are left out. Source properties are
# directory-scoped, so they are set in the directory of <target> (TARGET_DIRECTORY).
function(rungs_isa_source target src isa)
  cmake_parse_arguments(ARG "SANITIZE_LIGHT" "" "" ${ARGN})
  get_filename_component(abs "${src}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(EMSCRIPTEN)
    if(isa STREQUAL "wasm")
      target_sources(${target} PRIVATE "${abs}")
      set_source_files_properties("${abs}" TARGET_DIRECTORY ${target} PROPERTIES COMPILE_OPTIONS "-msimd128")
    endif()
    return()
  endif()
  if(isa STREQUAL "wasm")
    return()
  elseif(isa STREQUAL "sse42")
    set(flags -msse4.2)
  elseif(isa STREQUAL "avx2")
    set(flags -mavx2 -mfma)
  elseif(isa STREQUAL "avx512")
    set(flags -mavx512f -mavx512cd -mavx512dq -mavx512bw -mavx512vl -mavx2 -mfma)
  else()
    message(FATAL_ERROR "rungs_isa_source: unknown isa '${isa}' for ${src}")
  endif()
  if(ARG_SANITIZE_LIGHT AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_FLAGS MATCHES "-fsanitize=")
    list(APPEND flags -O1 -g0 -fno-sanitize=undefined)
  endif()
  target_sources(${target} PRIVATE "${abs}")
  set_source_files_properties("${abs}" TARGET_DIRECTORY ${target} PROPERTIES COMPILE_OPTIONS "${flags}")
endfunction()
