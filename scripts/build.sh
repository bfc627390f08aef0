#!/usr/bin/env bash
# Configures and builds ibfabric into build/ (binaries in build/bin/). Warnings are errors.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIBF_WERROR=ON >/dev/null
cmake --build build -j"$JOBS"
