# Flags for the whole WebAssembly build (included from the top-level CMakeLists.txt under
# Emscripten only).
#   -fexceptions   rungs reports every user mistake with rungs::Error; Emscripten's default
#                  (DISABLE_EXCEPTION_CATCHING) would abort instead. Every object, GoogleTest
#                  included (scripts/setup builds it with the same flag), must use it.
#   -msimd128      on every translation unit, not only the kernels: xsimd then sees one
#                  architecture (wasm) everywhere, so no inline function is compiled two ways.
#   ALLOW_MEMORY_GROWTH  models and arenas are sized at run time.
add_compile_options(-fexceptions -msimd128)
add_link_options(-fexceptions -sALLOW_MEMORY_GROWTH=1)
