#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang, ASan and UBSan, and runs each
# for SECONDS (default 60): the reader and the FDW core on the corpus in
# tests/fuzz/corpus (new inputs go to build-fuzz/corpus, the tree is not changed),
# and a running provider whose region file changes under it.
# Fails on any crash, sanitizer report, leak, or input that takes over a second.
# Usage: bash scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}

bash scripts/setup.sh
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPFS_FUZZ=ON \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target pfs_fuzz_region pfs_fuzz_provider

# fuzz TARGET CORPUS... [libFuzzer flags]: runs one target for $seconds; fails on
# any crash, sanitizer report, leak, or input that takes over a second.
fuzz() {
  local target=$1 log=build-fuzz/$1.log status=0
  shift
  build-fuzz/tests/fuzz/"$target" -max_total_time="$seconds" -timeout=1 -rss_limit_mb=2048 \
    -artifact_prefix=build-fuzz/ -print_final_stats=1 "$@" >"$log" 2>&1 || status=$?
  grep -E '^#[0-9]+ +(INITED|DONE)|^stat::(number_of_executed_units|average_exec_per_sec|slowest_unit_time_sec|peak_rss_mb)' \
    "$log" || true
  # UBSan reports do not stop the run by themselves (-fno-sanitize-recover makes them
  # abort, but a report is a failure whatever the exit status).
  if [ "$status" -ne 0 ] || grep -qE 'runtime error|ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer)|SUMMARY:' "$log"; then
    echo "=== $target failed (exit $status); the end of its log:" >&2
    tail -60 "$log" >&2
    exit 1
  fi
}

mkdir -p build-fuzz/corpus build-fuzz/corpus-provider
echo "=== fuzzing the reader and the FDW core for $seconds s"
fuzz pfs_fuzz_region build-fuzz/corpus tests/fuzz/corpus
# The agent's own SIGBUS guard handles a region file that shrank: libFuzzer must not
# take SIGBUS for a crash.
echo "=== fuzzing a running provider whose region changes under it for $seconds s"
fuzz pfs_fuzz_provider -handle_bus=0 build-fuzz/corpus-provider tests/fuzz/corpus-provider
echo "=== fuzzing passed"
