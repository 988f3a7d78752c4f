#!/usr/bin/env bash
# The io interceptors' cost (issue 40), side by side with the plain call:
# tests/preload_programs/pl_ioloop runs one call in a loop (stdio: getc, fread of
# 1 byte and of 4 KiB, fgets, fwrite of 64 bytes; pread, preadv, preadv2, pwritev of
# 64 bytes; sendfile and copy_file_range of 4 KiB; a sem_wait+sem_post pair of a
# free semaphore), plain and under the interposer
# with every instrument enabled and timed and every consumer on (history
# included). Each figure: the median over RUNS runs (plain and interposed
# interleaved) of the run's median of 5 repetitions, pinned to one CPU. Prints ns
# per call, the difference and the ratio. getc is never interposed (its row shows
# the interposer leaves it alone); fread1 is what a wait on every getc would cost.
# The last row is the reference of the same run: an uncontended mutex lock+unlock
# (pl_lockloop: one lock wait per pair), whose cost docs/performance.md explains.
# A third side, "threaded", is the plain program with a second thread that sleeps
# (PL_IOLOOP_THREAD=1; pl_lockloop ignores it: a mutex is atomic either way): the
# interposer's watch thread makes every process multi-threaded, and glibc's stdio
# then takes its stream locks atomically; its columns split the difference into
# that part (threaded - plain) and the interposer's own work (preload - threaded).
# Usage: bash bench/preload_io.sh [build-dir]   (RUNS=5 by default; about a minute;
# ONLY='sem_pair|mutex lock\+unlock' runs those rows only)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
case "$build" in /*) ;; *) build="$PWD/$build" ;; esac
runs=${RUNS:-5}
preload="$build/agent/libpfs_preload.so"
loop="$build/tests/preload_programs/pl_ioloop"
lockloop="$build/tests/preload_programs/pl_lockloop"
[ -f "$preload" ] && [ -x "$loop" ] && [ -x "$lockloop" ] ||
  cmake --build "$build" -j"$(nproc)" --target pfs_preload pl_ioloop pl_lockloop
work=$(mktemp -d /tmp/pfs_preload_io.XXXXXX)
trap 'rm -rf "$work"' EXIT
cpu=$(($(nproc) - 1))

median() { sort -g | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
ns() { sed -n 's/^median_ns=//p'; }

# call|iterations per repetition (about 0.1 s each)
calls=(
  "getc|2000000"
  "fread1|1000000"
  "fread4k|200000"
  "fgets|1000000"
  "fwrite64|1000000"
  "pread|100000"
  "preadv|100000"
  "preadv2|100000"
  "pwritev|100000"
  "sendfile|50000"
  "copy_file_range|50000"
  "sem_pair|2000000"
  "mutex lock+unlock|2000000"
)
echo "=== ns per call (median of $runs runs, CPU $cpu; interposer: every instrument timed, every consumer on)"
printf '  %-18s %10s %10s %9s %7s %9s %9s\n' call plain preload diff ratio threaded "preload-thr"
for c in "${calls[@]}"; do
  IFS='|' read -r name n <<<"$c"
  # ONLY='sem_pair|mutex lock+unlock': those rows alone (a regular expression on the names)
  [ -n "${ONLY:-}" ] && ! [[ $name =~ ^(${ONLY})$ ]] && continue
  p=() q=() t=()
  cmd=("$loop" "$work" "$name" "$n" 5)
  [ "$name" = "mutex lock+unlock" ] && cmd=("$lockloop" "$n" 5)
  for ((i = 0; i < runs; i++)); do
    p+=("$(taskset -c "$cpu" "${cmd[@]}" | ns)")
    t+=("$(taskset -c "$cpu" env PL_IOLOOP_THREAD=1 "${cmd[@]}" | ns)")
    rm -f "$work/r.pfs"
    q+=("$(taskset -c "$cpu" env LD_PRELOAD="$preload" PFS_REGION="$work/r.pfs" PFS_INSTRUMENT='%=ON' "${cmd[@]}" | ns)")
  done
  pm=$(printf '%s\n' "${p[@]}" | median)
  qm=$(printf '%s\n' "${q[@]}" | median)
  tm=$(printf '%s\n' "${t[@]}" | median)
  printf '  %-18s %10.1f %10.1f %+9.1f %7.2f %9.1f %+9.1f\n' "$name" "$pm" "$qm" \
    "$(awk -v a="$qm" -v b="$pm" 'BEGIN {print a - b}')" "$(awk -v a="$qm" -v b="$pm" 'BEGIN {print a / b}')" \
    "$tm" "$(awk -v a="$qm" -v b="$tm" 'BEGIN {print a - b}')"
done
