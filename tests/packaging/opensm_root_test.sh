#!/usr/bin/env bash
# -DOPENSM_ROOT: builds the plugin against another OpenSM's headers and libraries, as for
# MLNX_OFED/DOCA's OpenSM on RHEL (docs/packaging.md). The other OpenSM is a copy of Debian's
# headers and libopensm/libosmcomp under a scratch prefix whose osm_version.h says "OpenSM
# 3.3.23-other", so the plugin can only name that version if the copy's headers were used. Checks:
# the configure took both libraries from the prefix, every compile of the plugin's sources searched
# the prefix's headers and never /usr/include/infiniband, the plugin names "OpenSM 3.3.23-other",
# and `ibfabric doctor` then fails its "plugin version" check against the system opensm with the
# exact rebuild command (-DOPENSM_ROOT=/usr). A prefix without headers is refused at configure.
# Usage: opensm_root_test.sh SOURCE_DIR BUILD_DIR   (exit 77 = skipped, the reason printed)
set -euo pipefail
src=$(cd "$1" && pwd) build=$(cd "$2" && pwd)
inc=/usr/include/infiniband
[ -r $inc/opensm/osm_version.h ] || { echo "SKIP: no OpenSM headers in $inc (package libopensm-dev)"; exit 77; }
command -v ninja >/dev/null || { echo "SKIP: ninja is not installed (package ninja-build)"; exit 77; }
[ -x "$build/bin/ibfabric" ] || { echo "SKIP: $build/bin/ibfabric is not built"; exit 77; }
# A fixed place under the build tree: a rerun rebuilds only what the copied headers touch.
tmp=$build/opensm-root-test
mkdir -p "$tmp"
rm -rf "$tmp/other-opensm" "$tmp/empty" "$tmp/b2"
fail() { echo "FAIL: $*"; exit 1; }

prefix=$tmp/other-opensm
mkdir -p "$prefix/include/infiniband" "$prefix/lib64"
cp -r $inc/opensm $inc/complib $inc/iba $inc/vendor "$prefix/include/infiniband/"
sed -i 's/#define OSM_VERSION "OpenSM \([0-9.]*\)"/#define OSM_VERSION "OpenSM \1-other"/' "$prefix/include/infiniband/opensm/osm_version.h"
other=$(grep -o '"OpenSM [^"]*"' "$prefix/include/infiniband/opensm/osm_version.h" | tr -d '"')
[[ "$other" == *-other ]] || fail "could not mark the copy's osm_version.h: $other"
multiarch=$(gcc -dumpmachine)
for l in opensm osmcomp; do
  so=$(ls /usr/lib/"$multiarch"/lib$l.so 2>/dev/null || ls /usr/lib64/lib$l.so) || { echo "SKIP: no lib$l.so"; exit 77; }
  cp -L "$so" "$prefix/lib64/lib$l.so"
done

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S "$src" -B "$tmp/b" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIBF_WERROR=ON -DIBF_BUILD_TESTS=OFF \
  -DOPENSM_ROOT="$prefix" "${launcher[@]}" >"$tmp/configure.log" 2>&1 || { tail -30 "$tmp/configure.log"; fail "configure with OPENSM_ROOT"; }
grep -qF "ibfabric_osm: built against $other ($prefix/include/infiniband, $prefix/lib64/libopensm.so)" "$tmp/configure.log" ||
  fail "configure did not report the other OpenSM: $(grep ibfabric_osm "$tmp/configure.log")"
for v in IBF_OPENSM_LIB IBF_OSMCOMP_LIB; do
  grep -q "^$v:FILEPATH=$prefix/lib64/" "$tmp/b/CMakeCache.txt" || fail "$v not from the prefix: $(grep "^$v:" "$tmp/b/CMakeCache.txt")"
done
cmake --build "$tmp/b" --target ibfabric_osm -j2 >"$tmp/build.log" 2>&1 || { tail -30 "$tmp/build.log"; fail "building the plugin against $prefix"; }
python3 - "$tmp/b/compile_commands.json" "$prefix" <<'EOF' || fail "a plugin source was compiled without the prefix's headers (above)"
import json, sys
# The sources that include OpenSM's headers: the plugin and its core (options.cpp includes none).
cmds = [c for c in json.load(open(sys.argv[1])) if "/ibfabric_osm.dir/" in c["command"] or "/ibf_osm_core.dir/" in c["command"]]
bad = [c["file"] for c in cmds if "-isystem " + sys.argv[2] + "/include/infiniband" not in c["command"]
       or "/usr/include/infiniband" in c["command"]]
if not cmds or bad:
    print("compiled without -isystem PREFIX/include/infiniband, or with /usr/include/infiniband:", bad or "no plugin sources")
    sys.exit(1)
EOF
grep -qaF "$other" "$tmp/b/lib/libibfabric_osm.so" || fail "the plugin does not name $other"
echo "ok: the plugin built against $prefix names $other"

# The system opensm is another OpenSM for this plugin: doctor names the rebuild command.
out=$("$build/bin/ibfabric" doctor --plugin-dir "$tmp/b/lib" --opensm-conf /dev/null --opensm-log /dev/null \
      --config /dev/null --url http://127.0.0.1:9 --json 2>&1 || true)
line=$(python3 -c 'import json,sys; print([c for c in json.loads(sys.argv[1])["checks"] if c["name"]=="plugin version"][0])' "$out") ||
  fail "doctor gave no plugin version check: $out"
grep -qF "'status': 'fail'" <<<"$line" || fail "doctor's plugin version check did not fail: $line"
grep -qF -- "cmake -S <ibfabric source> -B build-osm -DOPENSM_ROOT=/usr -DIBF_BUILD_TESTS=OFF && cmake --build build-osm --target package" <<<"$line" ||
  fail "doctor's fix lacks the rebuild command: $line"
echo "ok: ibfabric doctor: $line"

# A prefix without OpenSM headers is refused at configure, naming the missing file.
mkdir -p "$tmp/empty"
if cmake -S "$src" -B "$tmp/b2" -G Ninja -DIBF_BUILD_TESTS=OFF -DOPENSM_ROOT="$tmp/empty" >"$tmp/configure2.log" 2>&1; then
  fail "configure accepted OPENSM_ROOT=$tmp/empty"
fi
# CMake wraps its messages: compare with the lines joined.
grep -qF "OPENSM_ROOT=$tmp/empty: no $tmp/empty/include/infiniband/opensm/osm_version.h" <<<"$(tr -s ' \n' ' ' <"$tmp/configure2.log")" ||
  fail "the refusal does not name the missing header: $(grep -A3 'CMake Error' "$tmp/configure2.log")"
echo "ok: OPENSM_ROOT without headers is refused at configure"
