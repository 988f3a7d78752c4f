#!/usr/bin/env bash
# The LD_PRELOAD interposer's cost, side by side with the plain program:
# 1. microbenchmark: an uncontended pthread mutex lock+unlock loop
#    (tests/preload_programs/pl_lockloop), ns per lock+unlock, plain and under
#    the interposer in several settings; each figure is the median over RUNS
#    runs of the run's median of 7 repetitions, pinned to one CPU.
# 2. real programs: sysbench mutex, threads and fileio, throughput (events per
#    second of sysbench's own report) plain and under the interposer with every
#    instrument enabled and timed and every consumer on (history included);
#    median of RUNS runs each, plain and instrumented runs interleaved.
# Usage: bash bench/preload_vs_plain.sh [build-dir]   (RUNS=5 by default; ~3 minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
case "$build" in /*) ;; *) build="$PWD/$build" ;; esac
runs=${RUNS:-5}
preload="$build/agent/libpfs_preload.so"
loop="$build/tests/preload_programs/pl_lockloop"
[ -f "$preload" ] && [ -x "$loop" ] || cmake --build "$build" -j"$(nproc)" --target pfs_preload pl_lockloop
command -v sysbench >/dev/null || { echo "preload_vs_plain: sysbench is not installed" >&2; exit 1; }
work=$(mktemp -d /tmp/pfs_preload_bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
cpu=$(( $(nproc) - 1 ))

median() { sort -g | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

# with_preload <instrument> <consumers> cmd...: runs cmd under the interposer.
with_preload() {
  local instrument=$1 consumers=$2
  shift 2
  rm -f "$work/r.pfs"
  LD_PRELOAD="$preload" PFS_REGION="$work/r.pfs" PFS_INSTRUMENT="$instrument" PFS_CONSUMERS="$consumers" "$@"
}
plain() { "$@"; }

echo "=== microbenchmark: pthread_mutex_lock+unlock, ns per pair (median of $runs runs, CPU $cpu)"
declare -A micro
settings=(
  "plain|plain|"
  "preload, no region (pass-through)|env|PFS_REGION="
  "preload, instruments off|pre|%=OFF|"
  "preload, counted, summaries only|pre|%=COUNTED|events_waits_current=OFF,events_waits_history=OFF,events_waits_history_long=OFF"
  "preload, timed, current + summaries|pre|%=ON|events_waits_history=OFF,events_waits_history_long=OFF"
  "preload, timed, all consumers (history, history_long)|pre|%=ON|"
)
for s in "${settings[@]}"; do
  IFS='|' read -r name mode a b <<<"$s"
  vals=()
  for ((i = 0; i < runs; i++)); do
    case $mode in
      plain) out=$(taskset -c "$cpu" "$loop" 10000000 7) ;;
      env) out=$(LD_PRELOAD="$preload" PFS_REGION= taskset -c "$cpu" "$loop" 10000000 7) ;;
      pre) out=$(with_preload "$a" "$b" taskset -c "$cpu" "$loop" 10000000 7) ;;
    esac
    vals+=("$(sed -n 's/^median_ns=//p' <<<"$out")")
  done
  micro[$name]=$(printf '%s\n' "${vals[@]}" | median)
  printf '  %-58s %7.2f ns\n' "$name" "${micro[$name]}"
done
base=${micro[plain]}
for s in "${settings[@]}"; do
  IFS='|' read -r name _ <<<"$s"
  [ "$name" = plain ] && continue
  printf '  overhead per event, %-50s %+6.2f ns\n' "$name" "$(awk -v a="${micro[$name]}" -v b="$base" 'BEGIN {print a - b}')"
done

echo "=== sysbench throughput, events/s (median of $runs runs; all instruments ON, all consumers on)"
(cd "$work" && sysbench fileio --file-num=4 --file-total-size=64M prepare >/dev/null)
eps() {  # events per second from a sysbench report on stdin
  awk '/total time:/ {gsub("s", "", $3); t = $3} /total number of events:/ {n = $5} END {printf "%.1f\n", n / t}'
}
# sysbench's own defaults (as a user runs it), with a fixed amount of work; then
# lock-heavy variants that stress the interposer (little work between locks).
# name|PFS_INSTRUMENT|command ('%=ON': every instrument; empty: MySQL's defaults,
# which leave wait/synch off)
nofsync="sysbench fileio --threads=2 --file-num=4 --file-total-size=64M --file-test-mode=rndrw --file-fsync-freq=0 --events=200000 --time=0 run"
tests=(
  "mutex|%=ON|sysbench mutex --threads=2 run"
  "threads|%=ON|sysbench threads --threads=2 --events=4000 --time=0 run"
  "fileio|%=ON|sysbench fileio --threads=2 --file-num=4 --file-total-size=64M --file-test-mode=rndrw --events=100000 --time=0 run"
  "mutex, 100 loops between locks|%=ON|sysbench mutex --threads=2 --mutex-locks=200000 --mutex-loops=100 run"
  # the lock-heavy run of bench/preload_lock_heavy.sh (which compares builds):
  # 64 mutexes, 1000 loops between locks, two million locks per thread
  "mutex, lock-heavy, 64 mutexes|%=ON|sysbench mutex --threads=2 --mutex-num=64 --mutex-loops=1000 --mutex-locks=2000000 run"
  "threads, 1 lock, 10 yields/event|%=ON|sysbench threads --threads=2 --thread-yields=10 --thread-locks=1 --events=100000 --time=0 run"
  "fileio, no fsync|%=ON|$nofsync"
  # where that loss comes from: sysbench takes one global mutex per event, which
  # its two threads contend for; timing it and writing its history lengthen the
  # time it is held
  "fileio, no fsync, synch counted|%=ON,wait/synch/%=COUNTED|$nofsync"
  "fileio, no fsync, synch off|%=ON,wait/synch/%=OFF|$nofsync"
  "fileio, no fsync, MySQL's defaults||$nofsync"
)
for t in "${tests[@]}"; do
  IFS='|' read -r name instrument cmd <<<"$t"
  p=() q=()
  for ((i = 0; i < runs; i++)); do
    p+=("$(cd "$work" && plain $cmd | eps)")
    q+=("$(cd "$work" && with_preload "$instrument" '' $cmd | eps)")
  done
  pm=$(printf '%s\n' "${p[@]}" | median)
  qm=$(printf '%s\n' "${q[@]}" | median)
  printf '  %-38s plain %11.1f  preload %11.1f  ratio %.3f\n' "$name" "$pm" "$qm" \
    "$(awk -v a="$qm" -v b="$pm" 'BEGIN {print a / b}')"
  printf '  %-38s   runs plain: %s | preload: %s\n' "" "${p[*]}" "${q[*]}"
done
(cd "$work" && sysbench fileio --file-num=4 --file-total-size=64M cleanup >/dev/null)
