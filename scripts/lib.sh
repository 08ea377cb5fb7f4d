# SPDX-License-Identifier: Apache-2.0
# Shared by scripts/run and scripts/test (sourced, not run).
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
# Emscripten 3.1.6 from Debian runs its JS optimizer with node and needs Debian's node modules.
export NODE_PATH=/usr/share/nodejs
export DEBIAN_FRONTEND=noninteractive
# One job per core; override with RUNGS_JOBS.
jobs=${RUNGS_JOBS:-$(nproc 2>/dev/null || echo 2)}

# step NAME: a heading with the time; step_durations prints how long each step took.
step_names=()
step_starts=()
step() {
  step_names+=("$*")
  step_starts+=("$(date +%s)")
  printf '\n==> %s  [%s]\n' "$*" "$(date +%T)" >&2
}
step_durations() {
  local now i end
  now=$(date +%s)
  for i in "${!step_names[@]}"; do
    end=${step_starts[$((i + 1))]:-$now}
    printf '  %6d s  %s\n' "$((end - step_starts[i]))" "${step_names[$i]}"
  done
}

# configure <preset>: configure once, and again when CMakePresets.json changed since (its cache
# variables are read only at configure time); otherwise the build re-runs CMake itself when a
# CMake file changed.
configure() {
  local stamp="build/$1/.presets.sha" want
  want=$(sha256sum CMakePresets.json | cut -d' ' -f1)
  if [ -f "build/$1/build.ninja" ] && [ -f "build/$1/CMakeCache.txt" ] &&
     [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then return 0; fi
  cmake --preset "$1"
  echo "$want" > "$stamp"
}

# build <preset> [target...]
build() {
  local preset=$1; shift
  configure "$preset"
  local targets=()
  for t in "$@"; do targets+=(--target "$t"); done
  cmake --build "build/$preset" -j "$jobs" "${targets[@]}"
}
