#!/usr/bin/env bash
# The README's first command: installs what is needed, builds, and runs the main job.
# Until the lab lands this is the offline check of the example plan against an example dump.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
set +e
build/bin/ibfabric check --expected config/examples/small-plan.yaml --actual config/examples/small-actual.ibnetdiscover
rc=$?
set -e
echo "ibfabric check exited with $rc (0 clean, 1 findings, 2 bad input)"
[ "$rc" -le 1 ]
