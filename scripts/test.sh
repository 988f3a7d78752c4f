#!/usr/bin/env bash
# Runs every test: installs what is missing, builds with warnings as errors, and
# runs the GoogleTest suites in the normal, ASan+UBSan and TSan builds, the
# fuzzer for 60 s, then the PostgreSQL regression suite and the live tests against
# throwaway clusters, and last the Debian packages (scripts/package.sh).
# Usage: bash scripts/test.sh          (all)
#        PFS_TEST_QUICK=1 bash scripts/test.sh   (normal build only)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

bash scripts/setup.sh

jobs=$(nproc)
passed=0
run_build() {  # name, extra cmake args...
  local dir="build$1"; shift
  echo "=== configure and build $dir ($*)"
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPFS_WERROR=ON "$@" >/dev/null
  cmake --build "$dir" -j"$jobs"
  echo "=== ctest $dir"
  ctest --test-dir "$dir" --output-on-failure -j"$jobs" | tee "$dir/ctest.log"
  passed=$((passed + $(sed -n 's/.*tests passed, 0 tests failed out of \([0-9]*\).*/\1/p' "$dir/ctest.log" | tail -1)))
}

run_build "" -DPFS_SHARED=ON  # also libperfschema.so: test_static_init links it
# The LD_PRELOAD interposer on real programs (sysbench) and edge-case programs.
bash scripts/preload_check.sh build
if [ -z "${PFS_TEST_QUICK:-}" ]; then
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 run_build "-asan" -DPFS_SANITIZE=address
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" run_build "-tsan" -DPFS_SANITIZE=thread
fi

if [ -z "${PFS_TEST_QUICK:-}" ]; then
  # libFuzzer over the reader and the FDW core (clang, ASan+UBSan), bounded in time.
  bash scripts/fuzz.sh "${PFS_FUZZ_SECONDS:-60}"
fi

if [ -f Makefile.pgxs ]; then
  echo "=== perfschema_fdw: build, install, pg_regress"
  bash scripts/fdw_check.sh | tee build/fdw_check.log
  passed=$((passed + $(sed -n 's/.*All \([0-9]*\) tests passed.*/\1/p' build/fdw_check.log | tail -1)))
  # The docs: every fenced block of README.md and docs/*.md, run (quick and full).
  echo "=== docs: scripts/doc_check.sh"
  bash scripts/doc_check.sh
fi
if [ -z "${PFS_TEST_QUICK:-}" ]; then
  # The Debian packages: built, lintian, installed, the demo on the installed files.
  echo "=== Debian packages"
  bash scripts/package.sh
fi
echo "=== all tests passed"
echo "tests: $passed passed, 0 failed"
