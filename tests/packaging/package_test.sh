#!/usr/bin/env bash
# Builds the .deb packages with cpack, unpacks them into a fresh root (dpkg-deb -x), and checks
# files, permissions, control fields, maintainer scripts, the same version everywhere, that the
# shipped config starts the shipped daemon, that the system opensm loads the unpacked plugin on
# ibsim and the unpacked daemon gets its snapshot (`ibfabric doctor` then passes), and
# `systemd-analyze verify` on the shipped unit.
# Usage: package_test.sh BUILD_DIR VERSION   (exit 77 = skipped, the reason printed)
set -euo pipefail
build=$1 version=$2
for tool in cpack dpkg-deb dpkg-query; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
tmp=$(mktemp -d /tmp/ibf-pkg-XXXXXX)
daemon_pid= ibsim_pid= opensm_pid=
cleanup() {
  for p in $opensm_pid $daemon_pid $ibsim_pid; do kill -9 "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

(cd "$build" && cpack -G DEB -B "$tmp/out" >"$tmp/cpack.log" 2>&1) || { cat "$tmp/cpack.log"; fail "cpack failed"; }
main_deb=$(ls "$tmp"/out/ibfabric_*.deb) || fail "no ibfabric_*.deb"
plugin_deb=$(ls "$tmp"/out/ibfabric-opensm-plugin_*.deb) || fail "no ibfabric-opensm-plugin_*.deb"
root=$tmp/root
dpkg-deb -x "$main_deb" "$root"
dpkg-deb -x "$plugin_deb" "$root"

arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -dumpmachine)
expect_mode() {  # path mode
  [ -e "$root/$1" ] || fail "$1 is not in the packages"
  local m; m=$(stat -c %a "$root/$1")
  [ "$m" = "$2" ] || fail "$1 has mode $m, expected $2"
}
expect_mode usr/bin/ibfabric 755
expect_mode usr/bin/ibfabricd 755
expect_mode usr/lib/systemd/system/ibfabricd.service 644
expect_mode usr/lib/tmpfiles.d/ibfabric.conf 644
expect_mode etc/ibfabric/ibfabricd.yaml 640
expect_mode usr/share/ibfabric/opensm-ibfabric.conf 644
expect_mode "usr/lib/$arch/libibfabric_osm.so" 644
expect_mode usr/share/man/man1/ibfabric.1 644
expect_mode usr/share/man/man8/ibfabricd.8 644
expect_mode usr/share/bash-completion/completions/ibfabric 644
expect_mode usr/share/ibfabric/keepalived.conf 644
grep -q '^\.SH "ibfabric doctor"$' "$root/usr/share/man/man1/ibfabric.1" || fail "the man page lacks ibfabric doctor"
grep -q '" lab fault")' "$root/usr/share/bash-completion/completions/ibfabric" || fail "the completion lacks lab fault"
bash -n "$root/usr/share/bash-completion/completions/ibfabric" || fail "the bash completion does not parse"
[ "$(dpkg-deb -c "$main_deb" | awk '{print $2}' | sort -u)" = "root/root" ] || fail "files not owned by root"

# Control fields and maintainer scripts.
opensm_version=$(dpkg-query -W -f='${Version}' opensm 2>/dev/null || true)
if [ -n "$opensm_version" ]; then
  dpkg-deb -f "$plugin_deb" Depends | grep -qF "opensm (= $opensm_version)" ||
    fail "plugin Depends '$(dpkg-deb -f "$plugin_deb" Depends)' lacks opensm (= $opensm_version)"
fi
[ "$(dpkg-deb -f "$main_deb" Version)" = "$version" ] || fail "package version $(dpkg-deb -f "$main_deb" Version)"
dpkg-deb -e "$main_deb" "$tmp/ctl"
grep -qx /etc/ibfabric/ibfabricd.yaml "$tmp/ctl/conffiles" || fail "the config is not a conffile"
grep -q "adduser --system" "$tmp/ctl/postinst" || fail "postinst does not create the ibfabric user"
sh -n "$tmp/ctl/postinst" && sh -n "$tmp/ctl/postrm" || fail "maintainer scripts do not parse"
grep -q "^User=ibfabric$" "$root/usr/lib/systemd/system/ibfabricd.service" || fail "the unit does not run as ibfabric"

# One version everywhere: CLI, daemon, and the plugin's "loaded (ibfabric V, ...)" log line.
[ "$("$root/usr/bin/ibfabric" --version)" = "$version" ] || fail "ibfabric --version: $("$root/usr/bin/ibfabric" --version)"
[ "$("$root/usr/bin/ibfabricd" --version)" = "$version" ] || fail "ibfabricd --version: $("$root/usr/bin/ibfabricd" --version)"
grep -qaF "loaded (ibfabric $version, " "$root/usr/lib/$arch/libibfabric_osm.so" || fail "the plugin's log line does not name $version"

# The shipped config starts the shipped daemon (paths moved into the temp dir).
"$root/usr/bin/ibfabricd" --config "$root/etc/ibfabric/ibfabricd.yaml" --socket "$tmp/osm.sock" \
  --http 127.0.0.1:0 --history "$tmp/history.db" --port-file "$tmp/port" 2>"$tmp/daemon.log" &
daemon_pid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
[ -s "$tmp/port" ] || { cat "$tmp/daemon.log"; fail "the daemon did not start with the shipped config"; }
kill "$daemon_pid"; wait "$daemon_pid" || true; daemon_pid=
[ "$(stat -c %a "$tmp/history.db")" = 600 ] || fail "history database mode $(stat -c %a "$tmp/history.db")"

# The system opensm loads the unpacked plugin on ibsim (found through LD_LIBRARY_PATH, as dlopen
# finds it in /usr/lib/<multiarch> once installed), with the shipped opensm.conf lines; the
# unpacked daemon receives its snapshot; the unpacked `ibfabric doctor` passes on that node.
umad2sim=/usr/lib/$arch/umad2sim/libumad2sim.so
if command -v ibsim >/dev/null && [ -x /usr/sbin/opensm ] && [ -r "$umad2sim" ]; then
  sim=$tmp/sim; mkdir -p "$sim"
  sock=ibfpkg$$_$RANDOM
  printf '%s\n' 'Switch 8 "sw1"' '[1] "h1"[1]' '[2] "h2"[1]' '' 'Hca 1 "h1"' '[1] "sw1"[1]' '' 'Hca 1 "h2"' '[1] "sw1"[2]' >"$sim/net"
  (cd "$sim" && IBSIM_SOCKNAME=$sock exec ibsim -s -n net >ibsim.out 2>&1 </dev/null) &
  ibsim_pid=$!
  for _ in $(seq 100); do grep -q "Network simulator ready" "$sim/ibsim.out" 2>/dev/null && break; sleep 0.05; done
  printf 'socket: %s\nhttp: "127.0.0.1:0"\nhistory: %s\n' "$sim/osm.sock" "$sim/history.db" >"$sim/ibfabricd.yaml"
  "$root/usr/bin/ibfabricd" --config "$sim/ibfabricd.yaml" --port-file "$sim/port" 2>"$sim/daemon.log" &
  daemon_pid=$!
  for _ in $(seq 100); do [ -s "$sim/port" ] && break; sleep 0.05; done
  [ -s "$sim/port" ] || { cat "$sim/daemon.log"; fail "the unpacked daemon did not start"; }
  { sed "s|socket=/run/ibfabric/osm.sock|socket=$sim/osm.sock|" "$root/usr/share/ibfabric/opensm-ibfabric.conf"
    echo "force_log_flush TRUE"; } >"$sim/opensm.conf"
  (cd "$sim" && IBSIM_SOCKNAME=$sock SIM_HOST=h1 OSM_TMP_DIR=$sim OSM_CACHE_DIR=$sim LD_PRELOAD=${IBF_OPENSM_PRELOAD:+$IBF_OPENSM_PRELOAD:}$umad2sim \
     LD_LIBRARY_PATH=$root/usr/lib/$arch exec /usr/sbin/opensm -F "$sim/opensm.conf" -f "$sim/osm.log" -e >opensm.out 2>&1 </dev/null) &
  opensm_pid=$!
  port=$(cat "$sim/port")
  sweeps=0
  for _ in $(seq 200); do
    sweeps=$(curl -s "http://127.0.0.1:$port/api/v1/fabric" | sed -n 's/.*"sweeps_ingested": *\([0-9]*\).*/\1/p')
    [ "${sweeps:-0}" -ge 1 ] && break; sleep 0.05
  done
  grep -q "ibfabric_osm: loaded (ibfabric $version, OpenSM " "$sim/osm.log" || { tail -20 "$sim/osm.log"; fail "the system opensm did not load the unpacked plugin"; }
  [ "${sweeps:-0}" -ge 1 ] || { cat "$sim/daemon.log"; fail "the unpacked daemon got no snapshot from the system opensm"; }
  "$root/usr/bin/ibfabric" doctor --opensm-conf "$sim/opensm.conf" --plugin-dir "$root/usr/lib/$arch" --opensm-log "$sim/osm.log" \
    --config "$sim/ibfabricd.yaml" --url "http://127.0.0.1:$port" >"$sim/doctor.out" || { cat "$sim/doctor.out"; fail "ibfabric doctor failed"; }
  for p in $opensm_pid $daemon_pid $ibsim_pid; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null || true; done
  opensm_pid= daemon_pid= ibsim_pid=
  echo "ok: the system opensm loaded the unpacked plugin; the daemon got sweep(s): $sweeps; ibfabric doctor passed"
else
  echo "SKIP: ibsim, /usr/sbin/opensm or umad2sim missing (packages ibsim-utils, opensm): the load test did not run"
fi

# The unit, with ExecStart pointing at the unpacked daemon.
if command -v systemd-analyze >/dev/null; then
  sed "s|/usr/bin/ibfabricd|$root/usr/bin/ibfabricd|" "$root/usr/lib/systemd/system/ibfabricd.service" >"$tmp/ibfabricd.service"
  out=$(cd "$tmp" && systemd-analyze verify "$tmp/ibfabricd.service" 2>&1) || fail "systemd-analyze verify: $out"
  [ -z "$out" ] || fail "systemd-analyze verify warns: $out"
else
  echo "SKIP: systemd-analyze is not installed (package systemd): the unit was not verified; every other check passed"
  exit 77
fi
echo "ok: $(basename "$main_deb") $(basename "$plugin_deb")"
