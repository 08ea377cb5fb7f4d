# SPDX-License-Identifier: Apache-2.0
# Shared by scripts/run and scripts/test (sourced, not run).
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
# Emscripten 3.1.6 from Debian runs its JS optimizer with node and needs Debian's node modules.
export NODE_PATH=/usr/share/nodejs
export DEBIAN_FRONTEND=noninteractive
# 2 cores on the project's machines; override with RUNGS_JOBS.
jobs=${RUNGS_JOBS:-2}

step() { printf '\n==> %s  [%s]\n' "$*" "$(date +%T)" >&2; }

# configure <preset>: configure once; later runs let the build re-run CMake only if a CMake file changed.
configure() {
  if [ -f "build/$1/build.ninja" ] && [ -f "build/$1/CMakeCache.txt" ]; then return 0; fi
  cmake --preset "$1"
}

# build <preset> [target...]
build() {
  local preset=$1; shift
  configure "$preset"
  local targets=()
  for t in "$@"; do targets+=(--target "$t"); done
  cmake --build "build/$preset" -j "$jobs" "${targets[@]}"
}
