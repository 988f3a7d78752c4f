#!/usr/bin/env bash
# The heap under the LD_PRELOAD interposer, side by side with the plain program: a
# malloc(64)+free loop (tests/preload_programs/pl_mallocloop), ns per pair, plain
# and under the interposer (pass-through, memory classes off, counted); each figure
# is the median over RUNS runs of the run's median of 7 repetitions, pinned to one
# CPU, the settings interleaved run by run.
# Usage: bash bench/preload_malloc.sh [build-dir]   (RUNS=5 by default; ~1 minute)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
case "$build" in /*) ;; *) build="$PWD/$build" ;; esac
runs=${RUNS:-5}
preload="$build/agent/libpfs_preload.so"
loop="$build/tests/preload_programs/pl_mallocloop"
[ -f "$preload" ] && [ -x "$loop" ] || cmake --build "$build" -j"$(nproc)" --target pfs_preload pl_mallocloop
work=$(mktemp -d /tmp/pfs_malloc_bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
cpu=$(( $(nproc) - 1 ))
echo "CPU: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1); clock source: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo unknown)"

median() { sort -g | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
settings=(
  "plain"
  "preload, no region (pass-through)"
  "preload, memory classes off"
  "preload, counted"
)
one() {  # setting name -> ns per pair of one run
  local out
  case $1 in
    plain) out=$(taskset -c "$cpu" "$loop" 10000000 7) ;;
    "preload, no region (pass-through)") out=$(LD_PRELOAD="$preload" PFS_REGION= taskset -c "$cpu" "$loop" 10000000 7) ;;
    "preload, memory classes off")
      rm -f "$work/r.pfs"
      out=$(LD_PRELOAD="$preload" PFS_REGION="$work/r.pfs" PFS_INSTRUMENT='%=ON,memory/%=OFF' taskset -c "$cpu" "$loop" 10000000 7) ;;
    "preload, counted")
      rm -f "$work/r.pfs"
      out=$(LD_PRELOAD="$preload" PFS_REGION="$work/r.pfs" PFS_INSTRUMENT='%=ON' taskset -c "$cpu" "$loop" 10000000 7) ;;
  esac
  sed -n 's/^median_ns=//p' <<<"$out"
}
declare -A vals
for ((i = 0; i < runs; i++)); do
  for s in "${settings[@]}"; do vals[$s]+="$(one "$s") "; done
done
echo "=== malloc(64)+free, ns per pair (median of $runs runs, CPU $cpu)"
base=$(tr ' ' '\n' <<<"${vals[plain]}" | grep . | median)
for s in "${settings[@]}"; do
  m=$(tr ' ' '\n' <<<"${vals[$s]}" | grep . | median)
  printf '  %-40s %7.2f ns  %+6.2f ns over plain  (runs: %s)\n' "$s" "$m" \
    "$(awk -v a="$m" -v b="$base" 'BEGIN {print a - b}')" "${vals[$s]}"
done
