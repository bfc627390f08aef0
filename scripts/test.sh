#!/usr/bin/env bash
# The README's test command: installs what is needed, builds, runs every test (unit + integration),
# then the ASan+UBSan subset (scripts/sanitize.sh ci; docs/testing.md "Sanitizers"). Any failure,
# a sanitizer report included, is a non-zero exit.
#   scripts/test.sh                 everything (what CI runs)
#   scripts/test.sh -L unit         only those ctest tests; the sanitizer subset is then not run
#                                   (said so at the end): arguments select tests of the normal build
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh test
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j2 --timeout 300 "$@"
if [ $# -gt 0 ]; then
  echo "test.sh: ctest arguments given ($*): the sanitizer subset did not run (bash scripts/sanitize.sh ci)"
  exit 0
fi
bash scripts/sanitize.sh ci
