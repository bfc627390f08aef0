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
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
start=$(date +%s)
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIBF_WERROR=OFF \
  -DCMAKE_C_FLAGS="$san" -DCMAKE_CXX_FLAGS="$san" "${launcher[@]}" >/dev/null

# The plugin test: hello, snapshot == the net file, resync after a daemon restart (opensm + plugin).
plugin_test=PluginOnIbsim.HelloAndSnapshotMatchTheNetFileAndResyncAfterControllerRestart
ci_tests=(dumps_test config_test wire_test sm_plugin_test)
case $MODE in
  all) cmake --build "$BUILD_DIR" -j"$JOBS" ;;
  # CI: the dump readers, the plan loader and the wire decoder (where untrusted bytes are parsed),
  # the plugin's sender -- and the plugin inside opensm. Not the daemon: building ibf_controller
  # with ASan alone costs more than the rest (docs/testing.md, "Sanitizers").
  ci) cmake --build "$BUILD_DIR" -j"$JOBS" --target "${ci_tests[@]}" sm_plugin_ibsim_test ibfabric_osm ;;
  *) echo "usage: $0 [all|ci]"; exit 2 ;;
esac
built=$(date +%s)

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
if [ "$MODE" = all ]; then
  ctest --test-dir "$BUILD_DIR" -L unit -j"$JOBS" --output-on-failure --timeout 600
else
  for t in "${ci_tests[@]}"; do
    echo "sanitize: $t"
    "$BUILD_DIR/bin/$t" --gtest_brief=1
  done
fi
units=$(date +%s)

# opensm is not instrumented; the ASan runtime must come first in its LD_PRELOAD (a memory error or
# UB in the plugin then aborts opensm and the test fails). The test kills opensm with SIGTERM and
# does not judge its exit status, so LeakSanitizer's report on OpenSM's own allocations is harmless.
IBF_OPENSM_PRELOAD=$(gcc -print-file-name=libasan.so)
export IBF_OPENSM_PRELOAD
out=$("$BUILD_DIR/bin/sm_plugin_ibsim_test" --gtest_filter="$plugin_test" 2>&1) || { echo "$out"; exit 1; }
echo "$out" | tail -3
echo "$out" | grep -q "\[  PASSED  \] 1 test" || { echo "sanitize: $plugin_test did not run (skipped?)"; exit 1; }
end=$(date +%s)
echo "sanitize ($MODE): build $((built - start)) s, unit tests $((units - built)) s, plugin in opensm $((end - units)) s"
