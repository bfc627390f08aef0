#!/usr/bin/env bash
# Builds the RPM packages with cpack beside the .deb ones and checks them against each other and
# in a scratch root: `rpm -qpl` lists the .deb's files (same paths), `rpm -qpR` names only runtime
# needs (shared libraries, systemd or shadow-utils before install, opensm = <OSM_VERSION> for the
# plugin; nothing a test or the lab needs), the scriptlets are the shipped ones; then
# `rpm --root=DIR -i` into a scratch root holding only a shell and the account tools (the scriptlets
# run chrooted there): %pre made the ibfabric system user and group from the sysusers line,
# /etc/ibfabric is 0750 root:ibfabric and the config 0640 root:ibfabric (%attr), the unit is the
# .deb's byte for byte; `rpm -e` removes every packaged file and keeps the accounts (RPM has no
# purge). The host's /etc/passwd, /etc/group and rpm database are never touched (checked).
# Usage: rpm_test.sh BUILD_DIR VERSION   (exit 77 = skipped, the reason printed). Needs root (chroot).
set -euo pipefail
build=$1 version=$2
for tool in cpack rpm rpmbuild dpkg-deb ldd; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (Debian packages rpm, dpkg-dev)"; exit 77; }
done
[ "$(id -u)" = 0 ] || { echo "SKIP: not root: rpm --root chroots into the scratch root"; exit 77; }
tmp=$(mktemp -d /tmp/ibf-rpm-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

(cd "$build" && cpack -G "RPM;DEB" -B "$tmp/out" >"$tmp/cpack.log" 2>&1) || { tail -40 "$tmp/cpack.log"; fail "cpack failed"; }
main_rpm=$(ls "$tmp"/out/ibfabric-"$version"-*.rpm | grep -v opensm-plugin) || fail "no ibfabric-$version-*.rpm"
plugin_rpm=$(ls "$tmp"/out/ibfabric-opensm-plugin-"$version"-*.rpm) || fail "no ibfabric-opensm-plugin-$version-*.rpm"
main_deb=$(ls "$tmp"/out/ibfabric_*.deb) plugin_deb=$(ls "$tmp"/out/ibfabric-opensm-plugin_*.deb)
host_files=(/etc/passwd /etc/group)
host_sums=$(sha256sum "${host_files[@]}"; ls -la /var/lib/rpm 2>/dev/null || true)
host_untouched() { [ "$(sha256sum "${host_files[@]}"; ls -la /var/lib/rpm 2>/dev/null || true)" = "$host_sums" ] || fail "the host's accounts or rpm database changed after $1"; }

# Same files: the regular files and symlinks of each .rpm are those of the matching .deb.
rpm_files() { rpm -qp --qf '[%{FILEMODES:perms} %{FILENAMES}\n]' "$1" | awk '$1 !~ /^d/ {print $2}' | sort; }
deb_files() { dpkg-deb -c "$1" | awk '$1 !~ /^d/ {print substr($6, 2)}' | sort; }
for pair in "$main_rpm $main_deb" "$plugin_rpm $plugin_deb"; do
  set -- $pair
  diff <(rpm_files "$1") <(deb_files "$2") >"$tmp/diff" || fail "$(basename "$1") and $(basename "$2") differ in files: $(cat "$tmp/diff")"
done
n=$(rpm_files "$main_rpm" | wc -l)
(( n >= 10 )) || fail "only $n files in $(basename "$main_rpm")"
# Lists in variables, not pipes into grep -q: under pipefail an early grep exit fails the pipe (SIGPIPE).
list=$(rpm -qpl "$main_rpm")
grep -qx /usr/lib/systemd/system/ibfabricd.service <<<"$list" || fail "rpm -qpl: no unit"
grep -qx /usr/lib/sysusers.d/ibfabric.conf <<<"$list" || fail "rpm -qpl: no sysusers entry"
for f in /usr/libexec/ibfabric/ibfabric-sm-helper /usr/lib/systemd/system/ibfabric-sm-helper.socket \
         /usr/lib/systemd/system/ibfabric-sm-helper@.service /usr/lib/udev/rules.d/70-ibfabric-umad.rules; do
  grep -qx "$f" <<<"$list" || fail "rpm -qpl: no $f"
done
grep -qx /etc/ibfabric <<<"$list" || fail "rpm -qpl: /etc/ibfabric is not owned by the package"
! grep -qxE '/usr/lib/systemd(/system)?|/usr/share/man(/man[18])?|/usr/lib/(tmpfiles|sysusers)\.d|/usr/lib/udev(/rules\.d)?|/usr/libexec' <<<"$list" ||
  fail "the package owns a directory of the system's: $(grep -xE '/usr/lib/systemd(/system)?|/usr/share/man(/man[18])?|/usr/lib/(tmpfiles|sysusers)\.d|/usr/lib/udev(/rules\.d)?|/usr/libexec' <<<"$list")"
[ "$(rpm -qp --qf '%{VERSION}' "$main_rpm")" = "$version" ] || fail "rpm version $(rpm -qp --qf '%{VERSION}' "$main_rpm")"
flags=$(rpm -qp --qf '[%{FILEFLAGS:fflags} %{FILENAMES}\n]' "$main_rpm")
grep -qx 'cn /etc/ibfabric/ibfabricd.yaml' <<<"$flags" || fail "the config is not %config(noreplace): $(grep ibfabricd.yaml <<<"$flags")"
echo "ok: $(basename "$main_rpm") and $(basename "$plugin_rpm") hold the .deb's $n + $(rpm_files "$plugin_rpm" | wc -l) files"

# Requires: runtime needs only.
req=$(rpm -qpR "$main_rpm")
for want in 'libspdlog.so.1.10()(64bit)' 'libsqlite3.so.0()(64bit)' 'libibmad.so.5()(64bit)' '(systemd or shadow-utils)'; do
  grep -qxF "$want" <<<"$req" || fail "rpm -qpR $(basename "$main_rpm") lacks $want: $req"
done
! grep -qiE 'chromium|prometheus|keepalived|ibsim|gtest|cmake|python' <<<"$req" || fail "a test or lab dependency in Requires: $req"
osm=$(grep -o '"OpenSM [^"]*"' /usr/include/infiniband/opensm/osm_version.h | tr -d '"' | sed 's/^OpenSM //')
plugin_req=$(rpm -qpR "$plugin_rpm" | grep -vxE 'rpmlib\(.*|/bin/sh' | sort -u)
[ "$plugin_req" = "opensm = $osm" ] || fail "plugin Requires (besides rpmlib and /bin/sh for the scriptlets) '$plugin_req', expected 'opensm = $osm'"
scripts=$(rpm -qp --scripts "$main_rpm")
grep -qF "systemd-sysusers --replace=/usr/lib/sysusers.d/ibfabric.conf" <<<"$scripts" || fail "no sysusers %pre: $scripts"
grep -qF "$(grep '^u ' "$(dirname "$0")/../../packaging/ibfabric.sysusers")" <<<"$scripts" || fail "%pre's line is not the sysusers file's"
grep -qF "$(grep '^g ' "$(dirname "$0")/../../packaging/ibfabric.sysusers")" <<<"$scripts" || fail "%pre lacks the sysusers file's group line"
grep -q ldconfig <<<"$(rpm -qp --scripts "$plugin_rpm")" || fail "the plugin's scriptlets do not run ldconfig"
echo "ok: Requires: $(grep -vE "^rpmlib\(|^/bin/sh$|\((GLIBC|GLIBCXX|CXXABI|GCC|OPENSSL|IBMAD|IBUMAD)_" <<<"$req" | tr "\n" " ")| plugin: $plugin_req"

# A scratch root: a shell, the account tools and their libraries, nothing else (merged /usr).
root=$tmp/root
mkdir -p "$root"/usr/{bin,sbin,lib,lib64} "$root"/{etc,tmp,var/lib,run}
for l in bin sbin lib lib64; do ln -s "usr/$l" "$root/$l"; done
for b in sh cat grep systemd-sysusers groupadd useradd; do
  p=$(command -v "$b") || fail "$b is not on this host"
  p=$(readlink -f "$p")
  install -D "$p" "$root/usr/bin/$b"
  ldd "$p" | grep -o '/[^ ]*' | while read -r lib; do
    [ -e "$root$lib" ] || install -D "$(readlink -f "$lib")" "$root$lib"
  done
done
touch "$root/etc/passwd" "$root/etc/group" "$root/etc/shadow" "$root/etc/gshadow"
rpm --root="$root" --initdb
rpm --root="$root" -i --nodeps "$main_rpm" "$plugin_rpm" >"$tmp/rpm.log" 2>&1 || { cat "$tmp/rpm.log"; fail "rpm --root -i"; }
host_untouched "rpm --root -i"
grep -q 'does not exist - using root' "$tmp/rpm.log" && fail "rpm did not find the ibfabric group for %attr: $(cat "$tmp/rpm.log")"
IFS=: read -r _ _ uid gid _ home shell < <(grep '^ibfabric:' "$root/etc/passwd") || fail "%pre made no ibfabric user: $(cat "$tmp/rpm.log")"
grep -q "^ibfabric:x:$gid:" "$root/etc/group" || fail "no ibfabric group with gid $gid"
grep -q '^rdma:' "$root/etc/group" || fail "%pre made no rdma group (the MAD devices' group)"
(( uid >= 1 && uid <= 999 )) || fail "uid $uid is not a system uid"
[ "$home:$shell" = /var/lib/ibfabric:/usr/sbin/nologin ] || fail "home $home shell $shell"
[ "$(stat -c '%a %u:%g' "$root/etc/ibfabric")" = "750 0:$gid" ] || fail "/etc/ibfabric is $(stat -c '%a %u:%g' "$root/etc/ibfabric")"
[ "$(stat -c '%a %u:%g' "$root/etc/ibfabric/ibfabricd.yaml")" = "640 0:$gid" ] ||
  fail "the config is $(stat -c '%a %u:%g' "$root/etc/ibfabric/ibfabricd.yaml")"
[ "$(stat -c '%a %u:%g' "$root/usr/bin/ibfabricd")" = "755 0:0" ] || fail "ibfabricd is $(stat -c '%a %u:%g' "$root/usr/bin/ibfabricd")"
dpkg-deb --fsys-tarfile "$main_deb" | tar -xO ./usr/lib/systemd/system/ibfabricd.service | cmp -s - "$root/usr/lib/systemd/system/ibfabricd.service" ||
  fail "the RPM's unit differs from the .deb's"
rpm --root="$root" -q ibfabric ibfabric-opensm-plugin >/dev/null || fail "rpm --root -q: not installed"
echo "ok: rpm --root -i: %pre made ibfabric uid $uid gid $gid; /etc/ibfabric 0750 and the config 0640 root:ibfabric; the unit is the .deb's"

rpm --root="$root" -e ibfabric ibfabric-opensm-plugin >>"$tmp/rpm.log" 2>&1 || { cat "$tmp/rpm.log"; fail "rpm --root -e"; }
host_untouched "rpm --root -e"
left=$(rpm_files "$main_rpm"; rpm_files "$plugin_rpm")
for f in $left; do [ ! -e "$root$f" ] || fail "rpm -e left $f"; done
[ ! -e "$root/etc/ibfabric" ] || fail "rpm -e left /etc/ibfabric"
grep -q '^ibfabric:' "$root/etc/passwd" || fail "rpm -e removed the ibfabric user (RPM convention: accounts stay)"
echo "ok: rpm -e removed every packaged file; the ibfabric user and group stay, as RPM packages do"
