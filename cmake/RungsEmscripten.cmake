# SPDX-License-Identifier: Apache-2.0
# Flags for the whole WebAssembly build (included from the top-level CMakeLists.txt under
# Emscripten only).
#   -fwasm-exceptions  rungs reports every user mistake with rungs::Error; Emscripten's default
#                  (DISABLE_EXCEPTION_CATCHING) would abort instead. WebAssembly's own exception
#                  handling, not Emscripten's JS-based -fexceptions: with that, every call that
#                  may throw from a function with a cleanup (a destructor to run, a catch) went
#                  out to a JS trampoline (invoke_*) and back in, each kernel call of a run and
#                  each parallel part among them. Every object, GoogleTest and protobuf-lite
#                  included (scripts/setup builds them with the same flag), must use it.
#   -msimd128      on every translation unit, not only the kernels: xsimd then sees one
#                  architecture (wasm) everywhere, so no inline function is compiled two ways.
#   ALLOW_MEMORY_GROWTH  models and arenas are sized at run time.
#   Debug builds check every memory access and every runtime call: ASSERTIONS=2 and SAFE_HEAP
#   (an unaligned or out-of-heap load or store aborts with its address), with function names in
#   stack traces (-g2) - the wasm-debug preset, which scripts/test runs once. That preset compiles
#   at -O1: at -O0 with SAFE_HEAP the bundled encoder takes minutes per request.
#   RUNGS_WASM_THREADS   the threaded variant (the wasm-threads preset): -pthread on every object
#                  (wasm-ld refuses shared memory if one lacks atomics), so GoogleTest comes from
#                  .deps/googletest-wasm-mt. Memory growth with threads makes JS views of the heap
#                  re-check its size on every access; the kernels run in wasm, so that costs little,
#                  and the link's warning saying so (-Wpthreads-mem-growth) is turned off.
add_compile_options(-fwasm-exceptions -msimd128)
add_link_options(-fwasm-exceptions -sALLOW_MEMORY_GROWTH=1)
if(RUNGS_WASM_THREADS)
  add_compile_options(-pthread)
  add_link_options(-pthread -Wno-pthreads-mem-growth)
endif()
add_link_options($<$<CONFIG:Debug>:-sASSERTIONS=2> $<$<CONFIG:Debug>:-sSAFE_HEAP=1> $<$<CONFIG:Debug>:-g2>)

# Debian's em++ runs its JS optimizer with node at link time and needs Debian's node modules
# ("Cannot find module 'acorn'" otherwise). The presets set NODE_PATH, but a plain
# `cmake --build build/wasm-release` from a shell without it must work too.
if(EXISTS "/usr/share/nodejs/acorn")
  set(CMAKE_CXX_LINKER_LAUNCHER "${CMAKE_COMMAND};-E;env;NODE_PATH=/usr/share/nodejs")
endif()
