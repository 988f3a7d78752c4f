#!/usr/bin/env bash
# Runs every test: installs what is missing, builds with warnings as errors, and
# runs the GoogleTest suites in the normal, ASan+UBSan and TSan builds, the
# fuzzer for 60 s, then the PostgreSQL regression suite and the live tests against
# throwaway clusters of each supported PostgreSQL (15 on the machine, 17 and 18 in
# Debian trees of their own: scripts/pg_trees.sh, scripts/pg_tree_check.sh), and
# last the Debian packages (scripts/package.sh; the extension's for 17 and 18 in
# those trees). Prints one line per PostgreSQL version with its counts, and one per
# version's package.
# Usage: bash scripts/test.sh          (all)
#        PFS_TEST_QUICK=1 bash scripts/test.sh   (normal build only, PostgreSQL 15 only)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

bash scripts/setup.sh

# The Debian trees with PostgreSQL 17 and 18, made in the background while the
# builds run (mostly downloads: about 4 min each on a fresh machine; a rerun finds
# them in the cache, PFS_PG_TREES).
trees_pid=
if [ -z "${PFS_TEST_QUICK:-}" ] && [ -f Makefile.pgxs ]; then
  trees_log=$(mktemp /tmp/pfs_pg_trees.XXXXXX)
  bash scripts/pg_trees.sh >"$trees_log" 2>&1 &
  trees_pid=$!
fi

jobs=$(nproc)
passed=0
# ccache (installed by setup.sh) under every build of the run, the Debian package's
# too (CMake reads these variables): the sanitizer, fuzz and package builds compile
# the same files again with other flags, and a rerun on the same machine recompiles
# only what changed. CCACHE_BASEDIR makes the paths relative, so a fresh clone in
# another directory hits the same entries. PFS_NO_CCACHE=1 turns it off.
if [ -z "${PFS_NO_CCACHE:-}" ] && command -v ccache >/dev/null; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
  export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
fi
# Each phase's wall time, for keeping the run short.
phase() { echo "=== [$(date +%T), ${SECONDS}s] $*"; }
run_build() {  # name, extra cmake args...
  local dir="build$1"; shift
  phase "configure and build $dir ($*)"
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPFS_WERROR=ON "$@" >/dev/null
  cmake --build "$dir" -j"$jobs"
  phase "ctest $dir"
  ctest --test-dir "$dir" --output-on-failure -j"$jobs" | tee "$dir/ctest.log"
  passed=$((passed + $(sed -n 's/.*tests passed, 0 tests failed out of \([0-9]*\).*/\1/p' "$dir/ctest.log" | tail -1)))
}

run_build "" -DPFS_SHARED=ON  # also libperfschema.so: test_static_init links it
# The LD_PRELOAD interposer on real programs (sysbench) and edge-case programs.
phase "the interposer: scripts/preload_check.sh"
bash scripts/preload_check.sh build
if [ -z "${PFS_TEST_QUICK:-}" ]; then
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 run_build "-asan" -DPFS_SANITIZE=address
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" run_build "-tsan" -DPFS_SANITIZE=thread
fi

if [ -z "${PFS_TEST_QUICK:-}" ]; then
  # libFuzzer over the reader and the FDW core (clang, ASan+UBSan), bounded in time.
  phase "fuzz: scripts/fuzz.sh"
  bash scripts/fuzz.sh "${PFS_FUZZ_SECONDS:-60}"
fi

if [ -f Makefile.pgxs ]; then
  phase "perfschema_fdw: build, install, pg_regress"
  bash scripts/fdw_check.sh | tee build/fdw_check.log
  grep '^PostgreSQL [0-9.]*: ' build/fdw_check.log >build/pg_versions.log
  if [ -n "$trees_pid" ]; then
    phase "perfschema_fdw on PostgreSQL 17 and 18, in their trees: scripts/pg_tree_check.sh"
    wait "$trees_pid" || { cat "$trees_log"; echo "FAILED: scripts/pg_trees.sh" >&2; exit 1; }
    cat "$trees_log"
    rm -f "$trees_log"
    bash scripts/pg_tree_check.sh | tee build/pg_tree_check.log
    grep '^PostgreSQL [0-9.]*: ' build/pg_tree_check.log >>build/pg_versions.log
  fi
  # "PostgreSQL 17.12: 24 regression, 3 isolation, 12 live tests passed": the sum.
  passed=$((passed + $(awk '{ n += $3 + $5 + $7 } END { print n + 0 }' build/pg_versions.log)))
  # The docs: every fenced block of README.md and docs/*.md, run (quick and full).
  phase "docs: scripts/doc_check.sh"
  bash scripts/doc_check.sh
fi
if [ -z "${PFS_TEST_QUICK:-}" ]; then
  # The Debian packages: built, lintian, installed, the demo on the installed files;
  # the extension's package for 17 and 18 in their trees. One line per version:
  # "PostgreSQL 17.12: package postgresql-17-perfschema-fdw built, ... demo passed".
  phase "Debian packages: scripts/package.sh"
  bash scripts/package.sh | tee build/package.log
  grep '^PostgreSQL [0-9.]*: package ' build/package.log >>build/pg_versions.log
fi
phase "all tests passed"
[ -f build/pg_versions.log ] && cat build/pg_versions.log
echo "tests: $passed passed, 0 failed"
