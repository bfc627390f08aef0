#!/usr/bin/env bash
# The README's test command: installs what is needed, builds, runs every test (unit + integration).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j2 --timeout 300 "$@"
