#!/usr/bin/env bash
# Builds the .deb packages with cpack and installs both with dpkg into a fresh root
# (`dpkg --root=DIR --force-script-chrootless`: the maintainer scripts run on the host with
# DPKG_ROOT set and must act on that root only). Checks the ibfabric system user and group the
# postinst created there, files, owners and modes, control fields, the same version everywhere,
# that a reinstall changes nothing (idempotent scripts), that the shipped config starts the
# installed daemon, that the system opensm loads the installed plugin on ibsim and the installed
# daemon gets its snapshot (`ibfabric doctor` then passes), `systemd-analyze verify` on the
# installed unit, the postinst's fallback without systemd-sysusers, and that `dpkg --purge`
# removes the user, group, state directory and every file. The host's /etc/passwd, /etc/group and
# dpkg database are never touched (checked). Needs root (dpkg --root, chown), as ctest runs here.
# Usage: package_test.sh BUILD_DIR VERSION   (exit 77 = skipped, the reason printed)
set -euo pipefail
build=$1 version=$2
for tool in cpack dpkg dpkg-deb dpkg-query useradd groupadd userdel groupdel; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (packages dpkg-dev, passwd)"; exit 77; }
done
[ "$(id -u)" = 0 ] || { echo "SKIP: not root: dpkg --root and the postinst's chown need root"; exit 77; }
tmp=$(mktemp -d /tmp/ibf-pkg-XXXXXX)
daemon_pid='' ibsim_pid='' opensm_pid=''
skipped=()
cleanup() {
  for p in $opensm_pid $daemon_pid $ibsim_pid; do kill -9 "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

(cd "$build" && cpack -G DEB -B "$tmp/out" >"$tmp/cpack.log" 2>&1) || { cat "$tmp/cpack.log"; fail "cpack failed"; }
main_deb=$(ls "$tmp"/out/ibfabric_*.deb) || fail "no ibfabric_*.deb"
plugin_deb=$(ls "$tmp"/out/ibfabric-opensm-plugin_*.deb) || fail "no ibfabric-opensm-plugin_*.deb"

# The host's account and package databases, compared after every dpkg run on the fresh root.
host_files=(/etc/passwd /etc/group /var/lib/dpkg/status)
host_sums=$(sha256sum "${host_files[@]}")
host_untouched() {
  [ "$(sha256sum "${host_files[@]}")" = "$host_sums" ] ||
    fail "the host's ${host_files[*]} changed after $1 (dpkg --root must act on the fresh root only; or did something else install packages meanwhile?)"
}

# A fresh root with only dpkg's admin directory: dpkg creates the rest (lock, triggers/, files).
root=$tmp/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status" "$root/var/lib/dpkg/available"
dpkg_root() { dpkg --root="$root" --force-script-chrootless "$@" >>"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; fail "dpkg $*"; }; }
# --force-depends: the fresh root holds none of the libraries or opensm; the programs run on the
# host's (the same Debian), as a chroot would need them all.
dpkg_root --force-depends -i "$main_deb" "$plugin_deb"
host_untouched "dpkg --root -i"
for pkg in ibfabric ibfabric-opensm-plugin; do
  st=$(dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${Status}' "$pkg")
  [ "$st" = "install ok installed" ] || fail "$pkg in the fresh root: '$st'"
done

# The accounts postinst created in the root (systemd-sysusers --root, /usr/lib/sysusers.d/ibfabric.conf).
IFS=: read -r pw_name _ pw_uid pw_gid _ pw_home pw_shell < <(grep '^ibfabric:' "$root/etc/passwd") ||
  fail "no ibfabric user in the root's /etc/passwd"
IFS=: read -r _ _ gid _ < <(grep '^ibfabric:' "$root/etc/group") || fail "no ibfabric group in the root's /etc/group"
(( pw_uid >= 1 && pw_uid <= 999 )) || fail "ibfabric uid $pw_uid is not a system uid (1-999)"
(( gid >= 1 && gid <= 999 )) || fail "ibfabric gid $gid is not a system gid (1-999)"
[ "$pw_gid" = "$gid" ] || fail "the ibfabric user's group is $pw_gid, the ibfabric group is $gid"
[ "$pw_home" = /var/lib/ibfabric ] || fail "ibfabric home $pw_home"
[ "$pw_shell" = /usr/sbin/nologin ] || fail "ibfabric shell $pw_shell"
grep -q '^rdma:' "$root/etc/group" || fail "no rdma group (the MAD devices' group, SupplementaryGroups= of the unit) in the root"
if command -v systemd-sysusers >/dev/null; then
  grep -q "Creating user 'ibfabric'" "$tmp/dpkg.log" || fail "postinst did not create the user with systemd-sysusers: $(cat "$tmp/dpkg.log")"
fi
echo "ok: dpkg --root created $pw_name uid $pw_uid gid $gid home $pw_home shell $pw_shell in the fresh root"

arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -dumpmachine)
expect_mode() {  # path mode [uid:gid, default 0:0]
  [ -e "$root/$1" ] || fail "$1 is not installed"
  local m o; m=$(stat -c %a "$root/$1") o=$(stat -c %u:%g "$root/$1")
  [ "$m" = "$2" ] || fail "$1 has mode $m, expected $2"
  [ "$o" = "${3:-0:0}" ] || fail "$1 is owned by $o, expected ${3:-0:0}"
}
# The group by number from the root's /etc/group: the host may give that number another name.
expect_mode etc/ibfabric 750 "0:$gid"
expect_mode etc/ibfabric/ibfabricd.yaml 640 "0:$gid"
expect_mode usr/bin/ibfabric 755
expect_mode usr/bin/ibfabricd 755
expect_mode usr/lib/systemd/system/ibfabricd.service 644
expect_mode usr/lib/tmpfiles.d/ibfabric.conf 644
expect_mode usr/lib/sysusers.d/ibfabric.conf 644
expect_mode usr/share/ibfabric/opensm-ibfabric.conf 644
expect_mode "usr/lib/$arch/libibfabric_osm.so" 644
expect_mode usr/share/man/man1/ibfabric.1 644
expect_mode usr/share/man/man8/ibfabricd.8 644
expect_mode usr/share/bash-completion/completions/ibfabric 644
expect_mode usr/share/ibfabric/keepalived.conf 644
expect_mode usr/libexec/ibfabric/ibfabric-sm-helper 755
expect_mode usr/lib/systemd/system/ibfabric-sm-helper.socket 644
expect_mode usr/lib/systemd/system/ibfabric-sm-helper@.service 644
expect_mode usr/lib/udev/rules.d/70-ibfabric-umad.rules 644
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
grep -qx /etc/ibfabric/ibfabricd.yaml "$root/var/lib/dpkg/info/ibfabric.conffiles" || fail "dpkg did not register the conffile"
dpkg-deb -f "$main_deb" Depends | grep -qF "systemd | systemd-standalone-sysusers | systemd-sysusers | adduser" ||
  fail "Depends '$(dpkg-deb -f "$main_deb" Depends)' lacks a sysusers implementation (or adduser)"
grep -q "^User=ibfabric$" "$root/usr/lib/systemd/system/ibfabricd.service" || fail "the unit does not run as ibfabric"

# One version everywhere: CLI, daemon, and the plugin's "loaded (ibfabric V, ...)" log line.
[ "$("$root/usr/bin/ibfabric" --version)" = "$version" ] || fail "ibfabric --version: $("$root/usr/bin/ibfabric" --version)"
[ "$("$root/usr/bin/ibfabricd" --version)" = "$version" ] || fail "ibfabricd --version: $("$root/usr/bin/ibfabricd" --version)"
grep -qaF "loaded (ibfabric $version, " "$root/usr/lib/$arch/libibfabric_osm.so" || fail "the plugin's log line does not name $version"

# Reinstalling runs postinst again: it must change nothing (accounts, owners, modes).
snap() { cat "$root/etc/passwd" "$root/etc/group"; stat -c '%n %a %u:%g' "$root/etc/ibfabric" "$root/etc/ibfabric/ibfabricd.yaml"; }
before=$(snap)
dpkg_root --force-depends -i "$main_deb" "$plugin_deb"
[ "$(snap)" = "$before" ] || fail "a reinstall changed the accounts or the config's owner/mode: $(diff <(echo "$before") <(snap))"
host_untouched "a reinstall"

# The shipped config starts the shipped daemon (paths moved into the temp dir).
"$root/usr/bin/ibfabricd" --config "$root/etc/ibfabric/ibfabricd.yaml" --socket "$tmp/osm.sock" \
  --http 127.0.0.1:0 --history "$tmp/history.db" --port-file "$tmp/port" 2>"$tmp/daemon.log" &
daemon_pid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
[ -s "$tmp/port" ] || { cat "$tmp/daemon.log"; fail "the daemon did not start with the shipped config"; }
kill "$daemon_pid"; wait "$daemon_pid" || true; daemon_pid=
[ "$(stat -c %a "$tmp/history.db")" = 600 ] || fail "history database mode $(stat -c %a "$tmp/history.db")"

# The system opensm loads the installed plugin on ibsim (found through LD_LIBRARY_PATH, as dlopen
# finds it in /usr/lib/<multiarch> on a real system), with the shipped opensm.conf lines; the
# installed daemon receives its snapshot; the installed `ibfabric doctor` passes on that node.
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
  [ -s "$sim/port" ] || { cat "$sim/daemon.log"; fail "the installed daemon did not start"; }
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
  grep -q "ibfabric_osm: loaded (ibfabric $version, OpenSM " "$sim/osm.log" || { tail -20 "$sim/osm.log"; fail "the system opensm did not load the installed plugin"; }
  [ "${sweeps:-0}" -ge 1 ] || { cat "$sim/daemon.log"; fail "the installed daemon got no snapshot from the system opensm"; }
  "$root/usr/bin/ibfabric" doctor --opensm-conf "$sim/opensm.conf" --plugin-dir "$root/usr/lib/$arch" --opensm-log "$sim/osm.log" \
    --config "$sim/ibfabricd.yaml" --url "http://127.0.0.1:$port" >"$sim/doctor.out" || { cat "$sim/doctor.out"; fail "ibfabric doctor failed"; }
  for p in $opensm_pid $daemon_pid $ibsim_pid; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null || true; done
  opensm_pid='' daemon_pid='' ibsim_pid=''
  echo "ok: the system opensm loaded the installed plugin; the daemon got sweep(s): $sweeps; ibfabric doctor passed"
else
  skipped+=("ibsim, /usr/sbin/opensm or umad2sim missing (packages ibsim-utils, opensm): the plugin load test did not run")
fi

# The installed unit, with ExecStart pointing at the installed daemon.
if command -v systemd-analyze >/dev/null; then
  sed "s|/usr/bin/ibfabricd|$root/usr/bin/ibfabricd|" "$root/usr/lib/systemd/system/ibfabricd.service" >"$tmp/ibfabricd.service"
  out=$(cd "$tmp" && systemd-analyze verify "$tmp/ibfabricd.service" 2>&1) || fail "systemd-analyze verify: $out"
  [ -z "$out" ] || fail "systemd-analyze verify warns: $out"
  for u in ibfabric-sm-helper.socket ibfabric-sm-helper@.service; do
    sed "s|/usr/libexec/ibfabric/ibfabric-sm-helper|$root/usr/libexec/ibfabric/ibfabric-sm-helper|" "$root/usr/lib/systemd/system/$u" >"$tmp/$u"
  done
  out=$(cd "$tmp" && systemd-analyze verify "$tmp/ibfabric-sm-helper.socket" 2>&1) || fail "systemd-analyze verify of the helper's units: $out"
  [ -z "$out" ] || fail "systemd-analyze verify of the helper's units warns: $out"
else
  skipped+=("systemd-analyze is not installed (package systemd): the unit was not verified")
fi

# postinst's fallback when no systemd-sysusers is installed (PATH without it): the same accounts
# through shadow's useradd --root; an admin's dpkg-statoverride on /etc/ibfabric (in that root's
# database) is left alone, the config still gets the group; postrm purge takes the accounts away.
alt=$tmp/alt nosysusers=$tmp/nosysusers-bin
mkdir -p "$alt/var/lib/dpkg" "$nosysusers"
dpkg-deb -x "$main_deb" "$alt"
dpkg-statoverride --root="$alt" --add root root 0755 /etc/ibfabric
for f in /usr/sbin/* /usr/bin/*; do
  [ "${f##*/}" = systemd-sysusers ] || [ -e "$nosysusers/${f##*/}" ] || ln -s "$f" "$nosysusers/${f##*/}"
done
PATH=$nosysusers DPKG_ROOT=$alt sh "$tmp/ctl/postinst" configure 2>"$tmp/alt.log" || { cat "$tmp/alt.log"; fail "postinst without systemd-sysusers"; }
IFS=: read -r _ _ alt_uid alt_gid _ alt_home alt_shell < <(grep '^ibfabric:' "$alt/etc/passwd") || fail "the fallback created no ibfabric user"
grep -q "^ibfabric:x:$alt_gid:" "$alt/etc/group" || fail "the fallback's ibfabric user has gid $alt_gid, not the ibfabric group's"
grep -q '^rdma:' "$alt/etc/group" || fail "the fallback created no rdma group"
if (( alt_uid > 999 )) || [ "$alt_home:$alt_shell" != /var/lib/ibfabric:/usr/sbin/nologin ]; then
  fail "the fallback made uid $alt_uid home $alt_home shell $alt_shell"
fi
[ "$(stat -c '%a %u:%g' "$alt/etc/ibfabric")" = "755 0:0" ] ||
  fail "postinst overrode the admin's dpkg-statoverride: /etc/ibfabric is $(stat -c '%a %u:%g' "$alt/etc/ibfabric")"
[ "$(stat -c '%a %u:%g' "$alt/etc/ibfabric/ibfabricd.yaml")" = "640 0:$alt_gid" ] ||
  fail "fallback: the config is $(stat -c '%a %u:%g' "$alt/etc/ibfabric/ibfabricd.yaml")"
PATH=$nosysusers DPKG_ROOT=$alt sh "$tmp/ctl/postrm" purge 2>>"$tmp/alt.log" || { cat "$tmp/alt.log"; fail "postrm purge after the fallback"; }
! grep -q '^ibfabric:' "$alt/etc/passwd" "$alt/etc/group" || fail "postrm purge left the fallback's ibfabric user or group"
host_untouched "the fallback's postinst and postrm"
echo "ok: without systemd-sysusers postinst made uid $alt_uid gid $alt_gid with useradd --root, kept a statoverride, postrm purge removed them"

# Purge: the user, group and state directory go (the daemon's StateDirectory= would have made
# /var/lib/ibfabric), the conffile too; what stays is only what no package owns: dpkg's admin
# directory and the account databases (with shadow's backups).
mkdir -p "$root/var/lib/ibfabric" && echo state >"$root/var/lib/ibfabric/history.db"
dpkg_root --purge ibfabric ibfabric-opensm-plugin
host_untouched "dpkg --root --purge"
! grep -q '^ibfabric:' "$root/etc/passwd" || fail "purge left the ibfabric user"
! grep -q '^ibfabric:' "$root/etc/group" || fail "purge left the ibfabric group"
! grep -q '^ibfabric:' "$root/etc/shadow" "$root/etc/gshadow" 2>/dev/null || fail "purge left ibfabric in shadow/gshadow"
[ ! -e "$root/var/lib/ibfabric" ] || fail "purge left /var/lib/ibfabric"
left=$(find "$root" -mindepth 1 -printf '%P\n' |
  grep -vxE 'etc|etc/\.pwd\.lock|etc/(passwd|group|shadow|gshadow)-?|var|var/lib|var/lib/dpkg(/.*)?' || true)
[ -z "$left" ] || fail "purge left: $left"
for pkg in ibfabric ibfabric-opensm-plugin; do
  st=$(dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
  [ -z "$st" ] || [ "$st" = not-installed ] || fail "$pkg after purge: '$st'"
done
echo "ok: purge removed the ibfabric user, group, /var/lib/ibfabric and every packaged file; the host's passwd, group and dpkg status unchanged"

if [ ${#skipped[@]} -gt 0 ]; then
  printf 'SKIP: %s; every other check passed\n' "${skipped[@]}"
  exit 77
fi
echo "ok: $(basename "$main_deb") $(basename "$plugin_deb")"
