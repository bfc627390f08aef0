#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang into build-fuzz/ (-fsanitize=fuzzer,address,
# undefined) and runs each for SECONDS on a seed corpus (fuzz/corpus/<name>/ plus tests/data and
# config/examples). New inputs accumulate in build-fuzz/corpus/<name>/; a crash leaves its input in
# build-fuzz/crashes/ and makes this script exit 1 (keep the input as a unit test: docs/testing.md).
# Usage: scripts/fuzz.sh [SECONDS] [NAME-REGEX]       e.g.  scripts/fuzz.sh 30 'ibnet|wire'
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-30}
ONLY=${2:-.}
BUILD_DIR=${BUILD_DIR:-build-fuzz}
JOBS=${JOBS:-2}
command -v clang++ >/dev/null || { echo "fuzz: clang++ is not installed (apt-get install clang)"; exit 2; }
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
san="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIBF_FUZZ=ON -DIBF_BUILD_TESTS=OFF \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_C_FLAGS="$san" -DCMAKE_CXX_FLAGS="$san" "${launcher[@]}" >/dev/null
all=(ibnetdiscover iblinkinfo ibdiagnet_net node_name_map plan_yaml waivers sweep_ref daemon_config wire_decoder http_api sm_helper)
targets=()
for n in "${all[@]}"; do [[ $n =~ $ONLY ]] && targets+=("fuzz_$n"); done
[ ${#targets[@]} -gt 0 ] || { echo "fuzz: no target matches '$ONLY' (${all[*]})"; exit 2; }
cmake --build "$BUILD_DIR" -j"$JOBS" --target "${targets[@]}"

seeds() {  # name -> seed files besides fuzz/corpus/<name>/
  case $1 in
    ibnetdiscover) ls tests/data/*ibnetdiscover*.txt config/examples/*.ibnetdiscover ;;
    iblinkinfo) ls tests/data/*iblinkinfo*.txt ;;
    ibdiagnet_net) ls tests/data/*.net ;;
    node_name_map) ls tests/data/*.txt | head -3 ;;
    plan_yaml) ls config/examples/*plan*.yaml config/examples/fat-tree-*.yaml ;;
    daemon_config) ls config/examples/ibfabricd.yaml packaging/ibfabricd.yaml ;;
  esac
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
mkdir -p "$BUILD_DIR/crashes"
failed=()
summary=()
for target in "${targets[@]}"; do
  bin=$BUILD_DIR/bin/$target name=${target#fuzz_}
  corpus=$BUILD_DIR/corpus/$name
  mkdir -p "$corpus"
  [ -d "fuzz/corpus/$name" ] && cp -n fuzz/corpus/"$name"/* "$corpus"/ 2>/dev/null || true
  for f in $(seeds "$name"); do cp -n "$f" "$corpus/seed-${f//\//_}"; done  # the path: two files share a basename
  log=$BUILD_DIR/fuzz-$name.log
  echo "fuzz: $name for ${SECONDS_EACH}s ($(ls "$corpus" | wc -l) inputs in $corpus)"
  if "$bin" "$corpus" -max_total_time="$SECONDS_EACH" -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
       -artifact_prefix="$BUILD_DIR/crashes/$name-" -print_final_stats=1 >"$log" 2>&1; then
    :
  else
    failed+=("$name"); tail -40 "$log"
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1)
  corp=$(grep -o 'corp: [0-9]*/[0-9a-zA-Z]*' "$log" | tail -1)
  summary+=("$(printf '%-14s %10s runs %7s exec/s  %-10s %-10s %s' "$name" "${execs:-?}" "${rate:-?}" "${cov:-}" "${ft:-}" "${corp:-}")")
done
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]} (inputs in $BUILD_DIR/crashes/)"
  exit 1
fi
echo "fuzz: no crash"
