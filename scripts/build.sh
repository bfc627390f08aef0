#!/usr/bin/env bash
# Configures and builds ibfabric into build/ (binaries in build/bin/). Warnings are errors.
# Uses ccache when it is installed (several work trees then share one compile cache).
#   scripts/build.sh                           everything: programs, plugin, tests, benchmarks
#   scripts/build.sh ibfabric ibfabricd        only these targets and what they need (the demo)
# JOBS (default 2) and BUILD_DIR (default build) from the environment.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}
BUILD_DIR=${BUILD_DIR:-build}
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(cd .. && pwd)} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
fi
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIBF_WERROR=ON "${launcher[@]}" >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$BUILD_DIR" -j"$JOBS" "${targets[@]}"
