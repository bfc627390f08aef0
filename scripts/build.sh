#!/usr/bin/env bash
# Configures and builds ibfabric into build/ (binaries in build/bin/). Warnings are errors.
# Uses ccache when it is installed (several work trees then share one compile cache).
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
cmake --build "$BUILD_DIR" -j"$JOBS"
