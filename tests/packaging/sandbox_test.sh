#!/bin/bash
# Issue 17 item 2: the shipped units' sandboxes, reproduced from the unit files (unit_sandbox.sh),
# on a stand-in SM node built in a private mount namespace (nothing on the host changes):
#   /etc/passwd, /etc/group   + user ibfabric, group rdma (what the package's sysusers.d creates)
#   /dev                      the pseudo devices + /dev/infiniband/umad0 (char 231:0, umad's major),
#                             root:rdma 0660 as packaging/70-ibfabric-umad.rules makes it
#   /etc/opensm/opensm.conf   0600 root, sm_priority 15;  /var/cache/opensm/guid2lid 0644 root
#   /run/ibfabric-sm-helper.sock  systemd-socket-activate --accept --inetd running the helper under
#                             ibfabric-sm-helper@.service's sandbox, the socket's owner and mode
#                             from ibfabric-sm-helper.socket; a stand-in opensm (sh named opensm)
# Then ibf_priv_probe (the daemon's MAD open and its helper client) runs under ibfabricd.service's
# sandbox and must: open umad0 (ENXIO: no driver here, so every check before the driver passed),
# set sm_priority 13 (file rewritten 0600 root, the opensm gets SIGHUP) and replace guid2lid
# (0644 kept). Then one unit option at a time is broken and exactly its step must fail.
#   bash sandbox_test.sh BUILD_DIR      (root; exit 77 = skipped, the reason printed)
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
pkg=$here/../../packaging
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (mount namespaces, a device cgroup, mknod)"
for t in unshare setpriv systemd-socket-activate mountpoint; do command -v $t >/dev/null || skip "$t is not installed"; done
[ -w /sys/fs/cgroup/devices ] || skip "no writable cgroup-v1 devices hierarchy (/sys/fs/cgroup/devices) to reproduce DevicePolicy="
unshare --mount true 2>/dev/null || skip "cannot create a mount namespace here"

if [ "${IBF_SANDBOX_INNER:-}" != 1 ]; then
  exec env IBF_SANDBOX_INNER=1 unshare --mount --propagation private -- bash "$0" "$@"
fi

# ---- the stand-in SM node (this mount namespace only) ----------------------------------------
work=$(mktemp -d /var/tmp/ibf-sandbox-XXXXXX)  # under /var/tmp: the units' PrivateTmp hides /tmp
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

if [ ! -d /etc/opensm ]; then  # no opensm package here: a copy of /etc with the directory, in this namespace only
  cp -a /etc "$work/etc"; mkdir "$work/etc/opensm"; mount --bind "$work/etc" /etc
fi
cp /etc/passwd "$work/passwd"; cp /etc/group "$work/group"
grep -q '^ibfabric:' "$work/passwd" || echo 'ibfabric:x:61990:61990:ibfabric daemon:/var/lib/ibfabric:/usr/sbin/nologin' >>"$work/passwd"
grep -q '^ibfabric:' "$work/group" || echo 'ibfabric:x:61990:' >>"$work/group"
grep -q '^rdma:' "$work/group" || echo 'rdma:x:61991:' >>"$work/group"
mount --bind "$work/passwd" /etc/passwd; mount --bind "$work/group" /etc/group

mount -t tmpfs -o mode=0755 tmpfs /dev
for d in "null 1 3" "zero 1 5" "full 1 7" "random 1 8" "urandom 1 9" "tty 5 0"; do set -- $d; mknod -m 0666 /dev/$1 c $2 $3; done
mkdir /dev/infiniband /dev/pts /dev/shm
mknod -m 0660 /dev/infiniband/umad0 c 231 0
# The udev rule's effect, taken from the rule file itself.
rule_group=$(grep -o 'GROUP="[^"]*"' "$pkg/70-ibfabric-umad.rules" | cut -d'"' -f2)
rule_mode=$(grep -o 'MODE="[^"]*"' "$pkg/70-ibfabric-umad.rules" | cut -d'"' -f2)
chgrp "$rule_group" /dev/infiniband/umad0; chmod "$rule_mode" /dev/infiniband/umad0

mkdir -p "$work/etc-opensm" "$work/var-cache"
mount -t tmpfs -o mode=0755 tmpfs /run
mount --bind "$work/etc-opensm" /etc/opensm
mount --bind "$work/var-cache" /var/cache
mkdir -m 0755 /var/cache/opensm
printf 'sm_key 0x00000000000000ab\nsm_priority 15\n' >/etc/opensm/opensm.conf; chmod 0600 /etc/opensm/opensm.conf
printf '0x0002c90300000009 0x0009 0x0009\n\n' >/var/cache/opensm/guid2lid; chmod 0644 /var/cache/opensm/guid2lid
printf '0x0002c90300000001 0x0001 0x0001\n\n0x0002c90300000002 0x0004 0x0007\n\n' >"$work/new-guid2lid"
chmod 0755 "$work"; chmod 0644 "$work/new-guid2lid"

cp /bin/sh "$work/opensm"
start_opensm() {
  rm -f "$work/opensm.ready"
  "$work/opensm" -c 'trap "exit 42" HUP; : >"$0.ready"; while :; do sleep 0.05; done' "$work/opensm" -F /etc/opensm/opensm.conf &
  opensm_pid=$!; pids+=("$opensm_pid")
  for _ in $(seq 100); do [ -e "$work/opensm.ready" ] && break; sleep 0.05; done  # its trap is set
}

# ---- the helper behind its socket, as the .socket and @.service units say -------------------
sock_key() { grep -E "^$1=" "$pkg/ibfabric-sm-helper.socket" | tail -1 | cut -d= -f2-; }
sock=$(sock_key ListenStream)
helper_exec=$(grep -E '^ExecStart=' "$pkg/ibfabric-sm-helper@.service" | tail -1 | cut -d= -f2- |
              sed "s|/usr/libexec/ibfabric/ibfabric-sm-helper|$build/bin/ibfabric-sm-helper|")
start_helper() {  # [--set K=V]... for the helper's unit
  rm -f "$sock"
  # shellcheck disable=SC2086
  systemd-socket-activate --accept --inetd -l "$sock" \
    bash "$here/unit_sandbox.sh" "$@" "$pkg/ibfabric-sm-helper@.service" -- $helper_exec 2>>"$work/helper.log" &
  helper_pid=$!; pids+=("$helper_pid")
  for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.05; done
  [ -S "$sock" ] || fail "the helper's socket $sock did not appear: $(cat "$work/helper.log")"
  chown "$(sock_key SocketUser):$(sock_key SocketGroup)" "$sock"; chmod "$(sock_key SocketMode)" "$sock"
}
stop_helper() { kill "$helper_pid" 2>/dev/null || true; wait "$helper_pid" 2>/dev/null || true; }

probe() {  # [--set K=V]... for ibfabricd.service; prints the probe's lines, returns its status
  bash "$here/unit_sandbox.sh" --major infiniband_mad=231 "$@" "$pkg/ibfabricd.service" -- \
    "$build/bin/ibf_priv_probe" /dev/infiniband/umad0 "$sock" 13 <"$work/new-guid2lid" 2>>"$work/sandbox.log"
}

# ---- the shipped units: all three work -------------------------------------------------------
start_opensm
start_helper
out=$(probe) && rc=0 || rc=$?
echo "$out"
[ "$rc" = 0 ] || fail "under the shipped units (status $rc): $out; sandbox: $(cat "$work/sandbox.log"); helper: $(cat "$work/helper.log")"
# ENXIO here (no ib_umad behind major 231); "ok" where the module is loaded and minor 0 exists.
grep -qxE 'mad: open /dev/infiniband/umad0: (ENXIO \(No such device or address\)|ok)' <<<"$out" || fail "MAD open: $out"
grep -qx "priority: ok priority=13 before=15 pid=$opensm_pid" <<<"$out" || fail "priority: $out"
[ "$(cat /etc/opensm/opensm.conf)" = $'sm_key 0x00000000000000ab\nsm_priority 13' ] || fail "opensm.conf: $(cat /etc/opensm/opensm.conf)"
[ "$(stat -c '%a %u:%g' /etc/opensm/opensm.conf)" = "600 0:0" ] || fail "opensm.conf is now $(stat -c '%a %u:%g' /etc/opensm/opensm.conf)"
wait "$opensm_pid" && orc=0 || orc=$?
[ "$orc" = 42 ] || fail "the stand-in opensm got no SIGHUP (status $orc)"
cmp -s /var/cache/opensm/guid2lid "$work/new-guid2lid" || fail "guid2lid not replaced: $(cat /var/cache/opensm/guid2lid)"
[ "$(stat -c '%a %u:%g' /var/cache/opensm/guid2lid)" = "644 0:0" ] || fail "guid2lid is now $(stat -c '%a %u:%g' /var/cache/opensm/guid2lid)"
grep -q "ok priority=13" "$work/helper.log" || fail "the helper logged nothing: $(cat "$work/helper.log")"
echo "ok: under the shipped units ibfabric opened umad0 (ENXIO), set sm_priority 13 (0600 root kept, opensm SIGHUP'd) and replaced guid2lid (0644 kept) through the helper"

# ---- ibfabricd itself under its unit's sandbox: POST /api/v1/sm/priority goes through the helper --
mount -t tmpfs -o mode=0755 tmpfs /var/lib  # its StateDirectory= is made here, not on the host
cfgdir=/run/ibfabric-test
mkdir -p "$cfgdir"
printf 't0ken-sandbox\n' >"$cfgdir/token"; chgrp ibfabric "$cfgdir/token"; chmod 0640 "$cfgdir/token"
printf 'socket: /run/ibfabric/osm.sock\nhttp: 127.0.0.1:0\ntoken_file: %s/token\nha:\n  mode: monitor\n  sm_helper: %s\n' \
  "$cfgdir" "$sock" >"$cfgdir/ibfabricd.yaml"
daemon_exec=$(grep -E '^ExecStart=' "$pkg/ibfabricd.service" | tail -1 | cut -d= -f2- |
              sed "s|/usr/bin/ibfabricd|$build/bin/ibfabricd|; s|/etc/ibfabric/ibfabricd.yaml|$cfgdir/ibfabricd.yaml|")
start_opensm
# shellcheck disable=SC2086
bash "$here/unit_sandbox.sh" --major infiniband_mad=231 "$pkg/ibfabricd.service" -- \
  $daemon_exec --port-file /run/ibfabric/port >"$work/daemon.log" 2>&1 &
daemon_pid=$!; pids+=("$daemon_pid")  # unit_sandbox.sh passes SIGTERM on to ibfabricd
for _ in $(seq 100); do [ -s /run/ibfabric/port ] && break; sleep 0.05; done
[ -s /run/ibfabric/port ] || fail "ibfabricd under its sandbox did not start: $(cat "$work/daemon.log")"
answer=$(curl -s --max-time 10 -X POST -H 'Authorization: Bearer t0ken-sandbox' -d '{"priority": 12}' \
         "http://127.0.0.1:$(cat /run/ibfabric/port)/api/v1/sm/priority")
kill "$daemon_pid" 2>/dev/null || true; wait "$daemon_pid" 2>/dev/null || true
grep -q "\"priority_before\": *13" <<<"$answer" && grep -q "\"opensm_pid\": *$opensm_pid" <<<"$answer" &&
  grep -q "\"sm_helper\": *\"$sock\"" <<<"$answer" || fail "POST /api/v1/sm/priority: $answer; daemon: $(cat "$work/daemon.log")"
[ "$(cat /etc/opensm/opensm.conf)" = $'sm_key 0x00000000000000ab\nsm_priority 12' ] || fail "opensm.conf after the daemon: $(cat /etc/opensm/opensm.conf)"
wait "$opensm_pid" && orc=0 || orc=$?
[ "$orc" = 42 ] || fail "the daemon's request sent the stand-in opensm no SIGHUP (status $orc)"
[ "$(stat -c %U /run/ibfabric)" = ibfabric ] || fail "RuntimeDirectory= /run/ibfabric is $(stat -c %U /run/ibfabric)'s"
echo "ok: ibfabricd (user ibfabric, its unit's sandbox) set sm_priority 13 -> 12 through the helper: $(tr -d ' \n' <<<"$answer")"

# ---- one broken option at a time: exactly its step fails ------------------------------------
expect() {  # WHAT STATUS REGEX -- probe args
  local what=$1 want=$2 re=$3; shift 4
  start_opensm
  local o r
  o=$(probe "$@") && r=0 || r=$?
  kill "$opensm_pid" 2>/dev/null || true; wait "$opensm_pid" 2>/dev/null || true
  [ "$r" = "$want" ] || fail "$what: status $r, expected $want: $o"
  grep -qE "$re" <<<"$o" || fail "$what: no line matching '$re' in: $o"
  echo "ok: $what -> $(grep -E "$re" <<<"$o" | head -1)"
}
expect "ibfabricd.service with PrivateDevices=yes" 1 '^mad: .*ENOENT' -- --set PrivateDevices=yes
expect "ibfabricd.service without DeviceAllow=" 1 '^mad: .*EPERM' -- --set DeviceAllow=
expect "ibfabricd.service without SupplementaryGroups=rdma" 1 '^mad: .*EACCES' -- --set SupplementaryGroups=
stop_helper
start_helper --set ReadWritePaths=
expect "ibfabric-sm-helper@.service without ReadWritePaths=" 6 '^priority: error: .*Read-only file system' --
grep -q '^guid2lid: error: .*/var/cache/opensm/guid2lid: cannot create a temporary file in /var/cache/opensm: Read-only file system$' <<<"$(probe)" || fail "guid2lid without ReadWritePaths did not fail read-only"
stop_helper
start_helper
chgrp root "$sock"
expect "the helper's socket without SocketGroup=ibfabric" 6 '^priority: error: .*cannot connect: Permission denied' --
stop_helper
echo "ok: each broken option fails exactly its step"
