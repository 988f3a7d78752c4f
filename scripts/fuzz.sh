#!/usr/bin/env bash
# Builds the libFuzzer target over the reader and the FDW core (tests/fuzz) with
# clang, ASan and UBSan, and runs it for SECONDS (default 60) on the corpus in
# tests/fuzz/corpus (new inputs go to build-fuzz/corpus, the tree is not changed).
# Fails on any crash, sanitizer report, leak, or input that takes over a second.
# Usage: bash scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}

bash scripts/setup.sh
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPFS_FUZZ=ON \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target pfs_fuzz_region
mkdir -p build-fuzz/corpus
echo "=== fuzzing the reader and the FDW core for $seconds s"
status=0
build-fuzz/tests/fuzz/pfs_fuzz_region -max_total_time="$seconds" -timeout=1 -rss_limit_mb=2048 \
  -artifact_prefix=build-fuzz/ -print_final_stats=1 build-fuzz/corpus tests/fuzz/corpus \
  >build-fuzz/fuzz.log 2>&1 || status=$?
grep -E '^#[0-9]+ +(INITED|DONE)|^stat::(number_of_executed_units|average_exec_per_sec|slowest_unit_time_sec|peak_rss_mb)' \
  build-fuzz/fuzz.log || true
# UBSan reports do not stop the run by themselves (-fno-sanitize-recover makes them
# abort, but a report is a failure whatever the exit status).
if [ "$status" -ne 0 ] || grep -qE 'runtime error|ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer)|SUMMARY:' build-fuzz/fuzz.log; then
  echo "=== fuzzer failed (exit $status); the end of its log:" >&2
  tail -60 build-fuzz/fuzz.log >&2
  exit 1
fi
echo "=== fuzzing passed"
