#!/usr/bin/env bash
# ASan + UBSan: builds everything into build-asan/ with -fsanitize=address,undefined (gcc), then
# runs the unit tests and one test with the ASan-built plugin inside a real opensm on ibsim.
# opensm itself is not instrumented: the ASan runtime is preloaded into it before umad2sim
# (IBF_OPENSM_PRELOAD, honoured by tests/support and the lab), see docs/testing.md "Sanitizers".
# Usage: scripts/sanitize.sh [all|ci]   all (default): every unit test + the plugin test;
#                                        ci: the subset CI runs (docs/testing.md says which and why)
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=${1:-all}
BUILD_DIR=${BUILD_DIR:-build-asan}
JOBS=${JOBS:-2}
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(cd .. && pwd)} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
fi
# -O1 -g, asserts on (Debug adds no other flag): a third faster to compile than -O2 (wire.cpp 26 s
# against 37 s) and the usual level for ASan; the reports keep file:line.
san="-O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
start=$(date +%s)
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DIBF_WERROR=OFF \
  -DCMAKE_C_FLAGS="$san" -DCMAKE_CXX_FLAGS="$san" "${launcher[@]}" >/dev/null

# The plugin test: hello, snapshot == the net file, resync after a daemon restart (opensm + plugin).
plugin_test=PluginOnIbsim.HelloAndSnapshotMatchTheNetFileAndResyncAfterControllerRestart
ci_tests=(dumps_test config_test wire_test sm_plugin_test)
case $MODE in
  all) cmake --build "$BUILD_DIR" -j"$JOBS" ;;
  # CI: the dump readers, the plan loader and the wire decoder (where untrusted bytes are parsed),
  # the plugin's sender -- and the plugin inside opensm. Not the daemon: building its libraries
  # (ibf_state, ibf_api, ibf_daemon, ...) with ASan alone costs more than the rest (docs/testing.md, "Sanitizers").
  ci) cmake --build "$BUILD_DIR" -j"$JOBS" --target "${ci_tests[@]}" sm_plugin_ibsim_test ibfabric_osm ;;
  *) echo "usage: $0 [all|ci]"; exit 2 ;;
esac
built=$(date +%s)

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# The unit tests' CPU-time bounds (docs/testing.md, "Performance asserts") measure the normal build;
# ASan+UBSan code runs 2-7x slower, so those tests are not run here (the normal build judges them).
timed_gtest='Check.HundredThousandLinksAreCheckedQuickly:Perf.HundredThousandLinkIbnetdiscover:Speed.ThirtyTwoThousandHostThreeTierPlan:WirePerf.EncodeDecodeLargeSnapshots'
echo "sanitize: not run under ASan (CPU-time bounds of the normal build): ${timed_gtest//:/ }"
if [ "$MODE" = all ]; then
  ctest --test-dir "$BUILD_DIR" -L unit -E "^(${timed_gtest//:/|})\$" -j"$JOBS" --output-on-failure --timeout 600
else
  for t in "${ci_tests[@]}"; do
    echo "sanitize: $t"
    "$BUILD_DIR/bin/$t" --gtest_brief=1 --gtest_filter="-$timed_gtest"
  done
fi
units=$(date +%s)

# opensm is not instrumented; the ASan runtime must come first in its LD_PRELOAD (a memory error or
# UB in the plugin then aborts opensm and the test fails). The test kills opensm with SIGTERM and
# does not judge its exit status, so LeakSanitizer's report on OpenSM's own allocations is harmless.
IBF_OPENSM_PRELOAD=$(gcc -print-file-name=libasan.so)
export IBF_OPENSM_PRELOAD
# The test's directory is kept (IBF_KEEP_TMP) so opensm's output can be read: any ASan or UBSan
# report there fails the run, and so does a leak with a frame in the plugin (OpenSM's own
# allocations left at SIGTERM are not ours).
ptmp=$(mktemp -d "${TMPDIR:-/tmp}/ibf-sanitize.XXXXXX")
# Two suppressions, neither ours: uninstrumented OpenSM and umad2sim, seen through ASan's
# interceptors. Debian 12's umad2sim (ibsim-utils 0.12) read() copies 320 bytes out of its own
# 288-byte buffer (heap-buffer-overflow, every received MAD), and OpenSM's vendor layer
# (libosmvendor) frees a MAD while umad_send() still writes it (heap-use-after-free in write()
# called from libibumad). Each stops opensm at its first sweep. interceptor_via_lib silences only
# interceptor reports whose direct caller is that library: the plugin's own calls stay checked.
printf 'interceptor_via_lib:libumad2sim.so\ninterceptor_via_lib:libibumad.so.3\n' >"$ptmp/asan.supp"
out=$(TMPDIR=$ptmp IBF_KEEP_TMP=1 ASAN_OPTIONS="$ASAN_OPTIONS:suppressions=$ptmp/asan.supp" \
      "$BUILD_DIR/bin/sm_plugin_ibsim_test" --gtest_filter="$plugin_test" 2>&1) ||
  { echo "$out"; rm -rf "$ptmp"; exit 1; }
echo "$out" | tail -3
echo "$out" | grep -q "\[  PASSED  \] 1 test" || { echo "$out"; echo "sanitize: $plugin_test did not run (skipped?)"; rm -rf "$ptmp"; exit 1; }
osm_out=$(find "$ptmp" -name opensm.out)
[ -n "$osm_out" ] || { echo "sanitize: no opensm.out under $ptmp"; exit 1; }
bad=$(cat $osm_out | grep -E "ERROR: AddressSanitizer|runtime error:" || true)
# LeakSanitizer blocks ("Direct/Indirect leak of ...", frames, blank line) with a frame of ours.
ours=$(cat $osm_out | awk '/^(Direct|Indirect) leak of/{b=$0; keep=0; next} b!=""{b=b"\n"$0; if ($0 ~ /libibfabric_osm|sm-plugin\/|ibf::/) keep=1} /^$/{if (keep) print b; b=""; keep=0} END{if (keep) print b}')
rm -rf "$ptmp"
if [ -n "$bad$ours" ]; then
  printf 'sanitize: sanitizer report from the plugin inside opensm:\n%s\n%b\n' "$bad" "$ours"
  exit 1
fi
echo "sanitize: opensm.out holds no ASan/UBSan report and no leak of the plugin"
end=$(date +%s)
echo "sanitize ($MODE): build $((built - start)) s, unit tests $((units - built)) s, plugin in opensm $((end - units)) s"
