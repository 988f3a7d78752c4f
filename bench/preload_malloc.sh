#!/usr/bin/env bash
# The heap under the LD_PRELOAD interposer: malloc(64)+free pairs
# (tests/preload_programs/pl_mallocloop), in each process side by side through the
# C library's own functions (raw) and through the program's (the interposer's),
# in alternating blocks; a process's figure is the median of its blocks'
# differences. Settings: plain (no interposer: the control, about 0), pass-through
# (no region), memory classes off, counted. Each figure is the median over RUNS
# processes, the settings interleaved, pinned to one CPU: a pair's cost moves by
# several ns from one process to the next, on both sides and also with address
# randomization off (the process's placement), so one process is not a measurement.
# BASE=<another libpfs_preload.so> adds its counted setting, interleaved with the
# others: the way to compare two builds side by side in one run.
# Usage: bash bench/preload_malloc.sh [build-dir]   (RUNS=11 by default; ~1.5 minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
case "$build" in /*) ;; *) build="$PWD/$build" ;; esac
runs=${RUNS:-11}
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
base=${BASE:-}
[ -z "$base" ] || settings+=("BASE, counted")
one() {  # setting name -> "raw program over" ns of one process
  local out
  case $1 in
    plain) out=$(taskset -c "$cpu" "$loop" 200000 41) ;;
    "preload, no region (pass-through)") out=$(LD_PRELOAD="$preload" PFS_REGION= taskset -c "$cpu" "$loop" 200000 41) ;;
    "preload, memory classes off")
      rm -f "$work/r.pfs"
      out=$(LD_PRELOAD="$preload" PFS_REGION="$work/r.pfs" PFS_INSTRUMENT='%=ON,memory/%=OFF' taskset -c "$cpu" "$loop" 200000 41) ;;
    "preload, counted")
      rm -f "$work/r.pfs"
      out=$(LD_PRELOAD="$preload" PFS_REGION="$work/r.pfs" PFS_INSTRUMENT='%=ON' taskset -c "$cpu" "$loop" 200000 41) ;;
    "BASE, counted")
      rm -f "$work/r.pfs"
      out=$(LD_PRELOAD="$base" PFS_REGION="$work/r.pfs" PFS_INSTRUMENT='%=ON' taskset -c "$cpu" "$loop" 200000 41) ;;
  esac
  echo "$(sed -n 's/^raw_ns=//p' <<<"$out") $(sed -n 's/^program_ns=//p' <<<"$out") $(sed -n 's/^over_raw_ns=//p' <<<"$out")"
}
declare -A raw prog over
for ((i = 0; i < runs; i++)); do
  for s in "${settings[@]}"; do
    read -r r p o < <(one "$s")
    raw[$s]+="$r " prog[$s]+="$p " over[$s]+="$o "
  done
done
med() { tr ' ' '\n' <<<"$1" | grep . | median; }
# The quartiles of a list, and how many of its values lie in the slow mode (above
# 1.5 times the median): the bimodality, printed rather than averaged away.
quart() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 3) / 4)], v[int((3 * NR + 3) / 4)]}'; }
slow() { local m; m=$(med "$1"); tr ' ' '\n' <<<"$1" | grep . | awk -v m="$m" '$1 > 1.5 * m && $1 > m + 1 {n++} END {print n + 0}'; }
echo "=== malloc(64)+free, ns per pair: the C library's own functions (raw) and the program's, side by side in each process; medians over $runs processes (CPU $cpu)"
printf '  %-36s %9s %9s %9s %15s %6s   %s\n' setting raw program over "over q1..q3" slow "over raw, per process"
for s in "${settings[@]}"; do
  read -r q1 q3 < <(quart "${over[$s]}")
  printf '  %-36s %9.2f %9.2f %+9.2f %7.2f..%-6.2f %3s/%-3s  (%s)\n' "$s" "$(med "${raw[$s]}")" "$(med "${prog[$s]}")" \
    "$(med "${over[$s]}")" "$q1" "$q3" "$(slow "${over[$s]}")" "$runs" "${over[$s]% }"
done
if [ -n "$base" ]; then
  # Paired by round (the two processes ran one after the other): the median of the
  # differences, robust to a slow stretch of the machine hitting both.
  paired=$(paste -d' ' <(tr ' ' '\n' <<<"${over["preload, counted"]}" | grep .) \
    <(tr ' ' '\n' <<<"${over["BASE, counted"]}" | grep .) | awk '{print $1 - $2}' | median)
  printf "  counted minus BASE counted, median of the %s rounds' differences: %+.2f ns\n" "$runs" "$paired"
fi
