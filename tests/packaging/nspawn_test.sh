#!/bin/bash
# Issue 17 item 2, under the real systemd: boots systemd as PID 1 in a systemd-nspawn container
# whose root is a throwaway overlay of this machine's (upper layer on a tmpfs, so nothing on the
# host changes), installs the .deb packages there with dpkg as an administrator would, and lets
# systemd itself apply the shipped units' sandboxes (no reproduction of them):
#   - ibfabricd.service, its ExecStart= alone replaced by ibf_priv_probe in a drop-in, as user
#     ibfabric: opens /dev/infiniband/umad0 (a char 231:0 node bound in, root:rdma 0660 as the
#     package's udev rule says; ENXIO: no ib_umad driver behind it here, so path, mode, group and
#     the device policy all let it through), sets sm_priority through ibfabric-sm-helper.socket
#     (opensm.conf stays 0600 root, the stand-in opensm gets SIGHUP) and replaces guid2lid
#     (0644 kept);
#   - the real ibfabricd (shipped ExecStart=, config with ha.sm_helper) answers
#     POST /api/v1/sm/priority through the helper;
#   - one drop-in per broken option, each failing exactly its step.
# The container has its own network namespace (loopback only) and is powered off at the end.
#   bash nspawn_test.sh BUILD_DIR      (root; exit 77 = skipped, the reason printed)
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
pkg=$here/../../packaging
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (overlay mount, systemd-nspawn)"
command -v systemd-nspawn >/dev/null || skip "systemd-nspawn is not installed (package systemd-container)"
for t in cpack nsenter mknod; do command -v $t >/dev/null || skip "$t is not installed"; done
[ -x "$build/bin/ibf_priv_probe" ] || skip "$build/bin/ibf_priv_probe is not built"

tmp=$(mktemp -d /dev/shm/ibf-nspawn-XXXXXX)  # tmpfs: the overlay's upper layer must not be on /
root=$tmp/root machine=ibf-nspawn-$$ nspawn_pid='' leader=''
cleanup() {
  if [ -n "$leader" ] && kill -0 "$leader" 2>/dev/null; then
    nsenter -t "$leader" -a systemctl poweroff >/dev/null 2>&1 || true
    for _ in $(seq 100); do kill -0 "$nspawn_pid" 2>/dev/null || break; sleep 0.1; done
  fi
  [ -n "$nspawn_pid" ] && kill -9 "$nspawn_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  mountpoint -q "$root" && umount -l "$root"
  rm -rf "$tmp"
  # systemd-nspawn leaves its mount-propagation directory behind when /run is not a tmpfs (it
  # refuses to remove a directory on a disk file system): one per run, so remove ours.
  rmdir "/run/systemd/nspawn/propagate/$machine" 2>/dev/null || true
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  [ -n "$leader" ] && nsenter -t "$leader" -a journalctl -b --no-pager -n 40 -o short-monotonic 2>/dev/null | sed 's/^/  journal: /' || true
  exit 1
}

(cd "$build" && cpack -G DEB -B "$tmp/out" >"$tmp/cpack.log" 2>&1) || { cat "$tmp/cpack.log"; fail "cpack failed"; }
ls "$tmp"/out/ibfabric_*.deb "$tmp"/out/ibfabric-opensm-plugin_*.deb >/dev/null || fail "cpack made no .deb"

mkdir -p "$tmp/upper" "$tmp/work" "$root"
mount -t overlay overlay -o "lowerdir=/,upperdir=$tmp/upper,workdir=$tmp/work" "$root" 2>"$tmp/mount.log" ||
  skip "cannot mount an overlay of / here: $(cat "$tmp/mount.log")"

# ---- the container's root, before boot (written into the overlay only) -----------------------
mkdir -p "$root/root/pkgs" "$root/usr/local/libexec" "$root/etc/opensm" "$root/var/cache/opensm" "$root/etc/ibfabric"
cp "$tmp"/out/*.deb "$root/root/pkgs/"
cp "$build/bin/ibf_priv_probe" "$root/usr/local/libexec/"
printf 'sm_key 0x00000000000000ab\nsm_priority 15\n' >"$root/etc/opensm/opensm.conf"; chmod 0600 "$root/etc/opensm/opensm.conf"
printf '0x0002c90300000009 0x0009 0x0009\n\n' >"$root/var/cache/opensm/guid2lid"; chmod 0644 "$root/var/cache/opensm/guid2lid"
printf '0x0002c90300000001 0x0001 0x0001\n\n0x0002c90300000002 0x0004 0x0007\n\n' >"$root/etc/ibfabric/new-guid2lid"
# A stand-in opensm: sh under that name (the helper looks for a root process named opensm that
# names this opensm.conf); exits 42 on SIGHUP.
cp /bin/sh "$root/usr/local/libexec/opensm"
cat >"$root/etc/systemd/system/ibf-opensm.service" <<'EOF'
[Service]
ExecStart=/usr/local/libexec/opensm -c 'trap "exit 42" HUP; : >/run/ibf-opensm.ready; while :; do sleep 0.05; done' opensm -F /etc/opensm/opensm.conf
EOF
# Boot only what the test needs (not the host's own services).
cat >"$root/etc/systemd/system/ibf-test.target" <<'EOF'
[Unit]
Description=ibfabric nspawn test
Requires=sysinit.target sockets.target
After=sysinit.target sockets.target
AllowIsolate=yes
EOF
# umad0 as the package's udev rule leaves it (there is no udev in a container).
rule_group=$(grep -o 'GROUP="[^"]*"' "$pkg/70-ibfabric-umad.rules" | cut -d'"' -f2)
rule_mode=$(grep -o 'MODE="[^"]*"' "$pkg/70-ibfabric-umad.rules" | cut -d'"' -f2)
mknod -m 0600 "$tmp/umad0" c 231 0

systemd-nspawn -D "$root" -M "$machine" --register=no --keep-unit --private-network \
  --bind="$tmp/umad0:/dev/infiniband/umad0" --boot -- systemd.firstboot=off systemd.unit=ibf-test.target \
  >"$tmp/console.log" 2>&1 &
nspawn_pid=$!
for _ in $(seq 200); do
  leader=$(pgrep -P "$(pgrep -P "$nspawn_pid" -x systemd-nspawn || echo "$nspawn_pid")" -x systemd || true)
  [ -n "$leader" ] && break
  kill -0 "$nspawn_pid" 2>/dev/null || skip "systemd-nspawn could not boot systemd here: $(tail -5 "$tmp/console.log")"
  sleep 0.1
done
[ -n "$leader" ] || skip "systemd-nspawn started no systemd within 20 s: $(tail -5 "$tmp/console.log")"
in_ct() { nsenter -t "$leader" -a "$@"; }
state=''
for _ in $(seq 300); do  # its private socket appears a moment after PID 1 starts
  state=$(in_ct timeout 60 systemctl is-system-running --wait 2>&1 || true)
  case $state in *"Failed to connect"* | *"not been booted"*) sleep 0.1 ;; *) break ;; esac
done
case $state in running | degraded) ;; *) fail "the container's systemd did not come up: '$state'" ;; esac
echo "ok: systemd $(in_ct systemctl --version | head -1 | cut -d' ' -f2) booted as PID 1 in the container ($state)"

# ---- install as an administrator would ---------------------------------------------------------
in_ct sh -c 'DEBIAN_FRONTEND=noninteractive dpkg -i /root/pkgs/*.deb' >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; fail "dpkg -i failed in the container"; }
in_ct id ibfabric >/dev/null || fail "the package created no user ibfabric"
in_ct getent group "$rule_group" >/dev/null || fail "no group $rule_group (the udev rule's) in the container"
in_ct chgrp "$rule_group" /dev/infiniband/umad0
in_ct chmod "$rule_mode" /dev/infiniband/umad0
in_ct systemctl start ibfabric-sm-helper.socket
sock=$(grep -E '^ListenStream=' "$pkg/ibfabric-sm-helper.socket" | cut -d= -f2-)
[ "$(in_ct stat -c '%a %U:%G' "$sock")" = "660 root:ibfabric" ] || fail "the helper's socket is $(in_ct stat -c '%a %U:%G' "$sock")"

start_opensm() {
  in_ct rm -f /run/ibf-opensm.ready
  in_ct systemctl restart ibf-opensm.service
  for _ in $(seq 100); do in_ct test -e /run/ibf-opensm.ready && break; sleep 0.05; done
  opensm_pid=$(in_ct systemctl show -p MainPID --value ibf-opensm.service)
}
opensm_status() {  # the stand-in's exit status once it ended (42: it got SIGHUP)
  for _ in $(seq 100); do [ "$(in_ct systemctl show -p SubState --value ibf-opensm.service)" = running ] || break; sleep 0.05; done
  in_ct systemctl show -p ExecMainStatus --value ibf-opensm.service
}

# ibfabricd.service exactly as shipped, but its command the probe (and its output a file).
dropin=/etc/systemd/system/ibfabricd.service.d
probe() {  # [OPTION=VALUE]... extra drop-in lines (a broken option); prints the probe's lines, returns its status
  in_ct mkdir -p "$dropin"
  {
    printf '[Service]\nType=oneshot\nRestart=no\nExecStart=\n'
    printf 'ExecStart=/usr/local/libexec/ibf_priv_probe /dev/infiniband/umad0 %s 13\n' "$sock"
    printf 'StandardInput=file:/etc/ibfabric/new-guid2lid\nStandardOutput=file:/run/ibf-probe.out\n'
    for o in "$@"; do printf '%s\n' "$o"; done
  } | in_ct sh -c "cat >$dropin/ibf-test.conf"
  in_ct systemctl daemon-reload
  in_ct rm -f /run/ibf-probe.out
  in_ct systemctl start ibfabricd.service >/dev/null 2>&1 || true
  in_ct cat /run/ibf-probe.out 2>/dev/null || true
  return "$(in_ct systemctl show -p ExecMainStatus --value ibfabricd.service)"
}

# ---- the shipped units: all three work ---------------------------------------------------------
start_opensm
out=$(probe) && rc=0 || rc=$?
echo "$out"
[ "$rc" = 0 ] || fail "under the shipped units (status $rc): $out"
grep -qxE 'mad: open /dev/infiniband/umad0: (ENXIO \(No such device or address\)|ok)' <<<"$out" || fail "MAD open: $out"
grep -qx "priority: ok priority=13 before=15 pid=$opensm_pid" <<<"$out" || fail "priority: $out"
[ "$(in_ct cat /etc/opensm/opensm.conf)" = $'sm_key 0x00000000000000ab\nsm_priority 13' ] || fail "opensm.conf: $(in_ct cat /etc/opensm/opensm.conf)"
[ "$(in_ct stat -c '%a %u:%g' /etc/opensm/opensm.conf)" = "600 0:0" ] || fail "opensm.conf is now $(in_ct stat -c '%a %u:%g' /etc/opensm/opensm.conf)"
[ "$(opensm_status)" = 42 ] || fail "the stand-in opensm got no SIGHUP"
in_ct cmp -s /var/cache/opensm/guid2lid /etc/ibfabric/new-guid2lid || fail "guid2lid not replaced: $(in_ct cat /var/cache/opensm/guid2lid)"
[ "$(in_ct stat -c '%a %u:%g' /var/cache/opensm/guid2lid)" = "644 0:0" ] || fail "guid2lid is now $(in_ct stat -c '%a %u:%g' /var/cache/opensm/guid2lid)"
[ "$(in_ct systemctl show -p User --value ibfabricd.service)" = ibfabric ] || fail "ibfabricd.service's User= is not ibfabric"
echo "ok: systemd ran ibfabricd.service's sandbox as user ibfabric: umad0 opened (ENXIO), sm_priority 13 (0600 root kept, opensm SIGHUP'd) and guid2lid replaced (0644 kept) through the helper"

# ---- the real daemon under its shipped unit: POST /api/v1/sm/priority goes through the helper -----
in_ct rm -f "$dropin/ibf-test.conf"
in_ct sh -c 'umask 027; printf "t0ken-nspawn\n" >/etc/ibfabric/token; chgrp ibfabric /etc/ibfabric/token'
printf 'socket: /run/ibfabric/osm.sock\nhttp: 127.0.0.1:8639\ntoken_file: /etc/ibfabric/token\nha:\n  mode: monitor\n  sm_helper: %s\n' "$sock" |
  in_ct sh -c 'cat >/etc/ibfabric/ibfabricd.yaml'
in_ct systemctl daemon-reload
start_opensm
in_ct systemctl restart ibfabricd.service
for _ in $(seq 100); do in_ct curl -sf --max-time 1 http://127.0.0.1:8639/healthz >/dev/null 2>&1 && break; sleep 0.1; done
answer=$(in_ct curl -s --max-time 10 -X POST -H 'Authorization: Bearer t0ken-nspawn' -d '{"priority": 12}' http://127.0.0.1:8639/api/v1/sm/priority || true)
grep -q '"priority_before": *13' <<<"$answer" && grep -q "\"opensm_pid\": *$opensm_pid" <<<"$answer" &&
  grep -q "\"sm_helper\": *\"$sock\"" <<<"$answer" || fail "POST /api/v1/sm/priority: $answer; $(in_ct journalctl -u ibfabricd --no-pager -n 20 -o cat)"
[ "$(in_ct cat /etc/opensm/opensm.conf)" = $'sm_key 0x00000000000000ab\nsm_priority 12' ] || fail "opensm.conf after the daemon: $(in_ct cat /etc/opensm/opensm.conf)"
[ "$(opensm_status)" = 42 ] || fail "the daemon's request sent the stand-in opensm no SIGHUP"
in_ct systemctl stop ibfabricd.service
echo "ok: the installed ibfabricd (systemd, user ibfabric) set sm_priority 13 -> 12 through the helper: $(tr -d ' \n' <<<"$answer")"

# ---- one broken option at a time (a drop-in each): exactly its step fails -------------------------
expect() {  # WHAT STATUS REGEX OPTION...
  local what=$1 want=$2 re=$3; shift 3
  start_opensm
  local o r
  o=$(probe "$@") && r=0 || r=$?
  in_ct systemctl stop ibf-opensm.service
  [ "$r" = "$want" ] || fail "$what: status $r, expected $want: $o"
  grep -qE "$re" <<<"$o" || fail "$what: no line matching '$re' in: $o"
  echo "ok: $what -> $(grep -E "$re" <<<"$o" | head -1)"
}
expect "ibfabricd.service with PrivateDevices=yes" 1 '^mad: .*ENOENT' PrivateDevices=yes
expect "ibfabricd.service without SupplementaryGroups=rdma" 1 '^mad: .*EACCES' SupplementaryGroups=
if in_ct test -w /sys/fs/cgroup/devices/system.slice 2>/dev/null || in_ct test -e /sys/fs/cgroup/cgroup.controllers; then
  expect "ibfabricd.service with DeviceAllow= emptied" 1 '^mad: .*EPERM' DeviceAllow=
else
  echo "note: the container's systemd has no devices controller here, so DevicePolicy= is not enforced in it (packaging_sandbox_test covers it with a devices cgroup)"
fi
in_ct mkdir -p /etc/systemd/system/ibfabric-sm-helper@.service.d
printf '[Service]\nReadWritePaths=\n' | in_ct sh -c 'cat >/etc/systemd/system/ibfabric-sm-helper@.service.d/ibf-test.conf'
expect "ibfabric-sm-helper@.service without ReadWritePaths=" 6 '^priority: error: .*Read-only file system'
in_ct rm /etc/systemd/system/ibfabric-sm-helper@.service.d/ibf-test.conf
in_ct mkdir -p /etc/systemd/system/ibfabric-sm-helper.socket.d
printf '[Socket]\nSocketGroup=root\n' | in_ct sh -c 'cat >/etc/systemd/system/ibfabric-sm-helper.socket.d/ibf-test.conf'
in_ct systemctl daemon-reload
in_ct systemctl restart ibfabric-sm-helper.socket
expect "ibfabric-sm-helper.socket with SocketGroup=root" 6 '^priority: error: .*cannot connect: Permission denied'
echo "ok: each broken option fails exactly its step, under the real systemd"
