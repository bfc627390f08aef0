#!/usr/bin/env bash
# The README's first command: installs what the demo needs (scripts/install-deps.sh lab), builds
# only the three programs it runs (ibfabric, ibfabricd, libibfabric_osm.so; scripts/test.sh builds
# the rest), and runs the main job:
#   1. a simulated 324-host fat-tree (real OpenSM + the ibfabric plugin + ibfabricd on ibsim) with
#      two cabling faults and two SM nodes (an OpenSM and an ibfabricd each), and its report;
#   2. a maintenance switchover to the standby SM and back (`ibfabric sm switchover`, no LID changes);
#   3. a kill -9 of the master OpenSM: the standby's HA agent sees it die (plugin + SMInfo probes)
#      and promotes its own SM; who took over how fast (docs/ha.md);
#   4. a one-SM lab where symbol errors set on a cable come back from OpenSM's perfmgr as a
#      port_errors finding (docs/metrics.md).
# Every step must give the exit code it is expected to give; the first that does not ends the demo
# with that code and a line naming the step (labs are stopped on every exit). At the end: how long
# each phase took. Without ibsim or opensm (install-deps could not install them) it says so and runs
# the offline check of the example plan against an example dump instead.
set -euo pipefail
cd "$(dirname "$0")/.."
T0=$SECONDS
timings=()
phase() { timings+=("$1 $(( SECONDS - T0 )) s"); T0=$SECONDS; }
ib=build/bin/ibfabric

# step NAME EXPECTED CMD...: runs CMD; an exit code outside EXPECTED ("0", "0|1") ends the demo.
step() {
  local name=$1 expected=$2 rc=0
  shift 2
  "$@" || rc=$?
  if [[ ! "$rc" =~ ^($expected)$ ]]; then
    echo "demo: FAILED at step \"$name\": exit $rc (expected $expected): $*" >&2
    exit $(( rc == 0 ? 1 : rc ))
  fi
}

# quiet CMD...: CMD without its output, which is shown when it fails (exit 2 or more; 1 = findings).
quiet() {
  local out rc=0
  out=$("$@" 2>&1) || rc=$?
  [ "$rc" -le 1 ] || printf '%s\n' "$out" | tail -25 >&2
  return "$rc"
}

step "install the lab's packages (scripts/install-deps.sh lab)" 0 bash scripts/install-deps.sh lab
phase install
step "build ibfabric, ibfabricd and the plugin (scripts/build.sh)" 0 bash scripts/build.sh ibfabric ibfabricd ibfabric_osm
phase build

if ! command -v ibsim >/dev/null || [ ! -x /usr/sbin/opensm ]; then
  echo "== ibsim or /usr/sbin/opensm is missing (packages ibsim-utils, opensm): no lab here; the offline check of the example plan against an example dump"
  step "ibfabric check (offline)" "0|1" "$ib" check --expected config/examples/small-plan.yaml \
    --actual config/examples/small-actual.ibnetdiscover
  exit 0
fi

LABDIR=$(mktemp -d /tmp/ibfabric-demo-XXXXXX)
LABDIR2=$(mktemp -d /tmp/ibfabric-demo-XXXXXX)
cleanup() {
  "$ib" lab down --dir "$LABDIR" >/dev/null 2>&1 || true
  "$ib" lab down --dir "$LABDIR2" >/dev/null 2>&1 || true
  rm -rf "$LABDIR" "$LABDIR2"
}
trap cleanup EXIT

echo "== ibfabric lab up config/examples/fat-tree-2tier-324.yaml --sms 2 with a crossed pair and a degraded link"
# Exit 1: findings, as planted (0 would mean the two faults went unseen).
step "lab up (324 hosts, 2 SMs, 2 faults)" 1 "$ib" lab up config/examples/fat-tree-2tier-324.yaml --sms 2 \
  --fault cross:leaf03/19,leaf03/20 --fault width:leaf07/25=1x --dir "$LABDIR"
phase "lab up + report"
echo
AGENT=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sms"][1]["api_port"])' "$LABDIR/state.json")
hosts=$(python3 -c 'import json,sys; print(" ".join(m["host"].split()[0] for m in json.load(open(sys.argv[1]))["sms"][::-1]))' "$LABDIR/state.json")
echo "== SM switchover for maintenance, there and back, no LID changes: ibfabric sm switchover --to NODE"
for to in $hosts; do
  step "sm switchover --to $to" 0 "$ib" sm switchover --to "$to" --url "http://127.0.0.1:$AGENT" --token-file "$LABDIR/api.token"
done
phase switchovers
echo
echo "== SM failover: kill -9 of the master OpenSM; the standby's HA agent (plugin + SMInfo probes) promotes its own SM"
step "lab fault kill-sm master" 0 "$ib" lab fault kill-sm master --dir "$LABDIR"
promoted=false
for _ in $(seq 50); do  # up to 10 s for the standby's own SM to be the live MASTER
  if "$ib" ha check --quiet --url "http://127.0.0.1:$AGENT" >/dev/null 2>&1; then promoted=true; break; fi
  sleep 0.2
done
$promoted || { echo "demo: FAILED at step \"failover\": the standby's SM was not the live MASTER 10 s after the kill" >&2; exit 1; }
# Exit 1: one live master and no live standby left (the killed SM is gone), as expected after a kill.
step "sm status after the failover" 1 "$ib" sm status --url "http://127.0.0.1:$AGENT"
step "lab down (the 2-SM lab)" 0 quiet "$ib" lab down --dir "$LABDIR"
phase failover
echo
# OpenSM's perfmgr runs in one-SM labs (with several SMs under umad2sim it can stall a handover: docs/lab.md)
echo "== Link health: a one-SM lab (config/examples/small-plan.yaml), 55 symbol errors set on leaf01/1 in ibsim, read by OpenSM's perfmgr"
step "lab up (small plan, 1 SM)" "0|1" quiet "$ib" lab up config/examples/small-plan.yaml --dir "$LABDIR2"
# Waits for the perfmgr's next reading of the port (every 5 s in the lab).
step "lab fault errors leaf01/1 SymbolErrorCounter=55" "0|1" quiet "$ib" lab fault errors leaf01/1 SymbolErrorCounter=55 --dir "$LABDIR2"
# Exit 1: the port_errors finding is there.
step "findings --kind port_errors" 1 "$ib" findings --kind port_errors --lab "$LABDIR2"
step "lab down (the 1-SM lab)" 0 quiet "$ib" lab down --dir "$LABDIR2"
phase "link health"
echo
echo "demo: every step gave its expected exit code; time per phase: $(IFS=,; echo "${timings[*]}" | sed 's/,/, /g')"
