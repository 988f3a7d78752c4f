#!/usr/bin/env bash
# The wait timer and the CYCLE watch, side by side in one run: BM_Mutex/raw, timed
# and timed_history (ns per lock+unlock) with
#   cycle         CYCLE, the agent's watch off (a kernel that vouches for the TSC)
#   cycle+watch   CYCLE, the watch on and checking every 10 ms (200 times as often as
#                 its default), as on a kvm-clock guest
#   nanosecond    NANOSECOND, the wait timer a kvm-clock guest had before CYCLE was
#                 used there
# in alternating rounds (one pfs_bench process per setting and round, pinned to one
# CPU), medians over ROUNDS rounds of each run's median of 5 repetitions; prints the
# ratios to the first setting. Names the CPU and the kernel clock source.
# Usage: bash bench/cycle_watch_ab.sh [build-dir]   (ROUNDS=5 by default; ~2 minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${ROUNDS:-5}
bench="$build/bench/pfs_bench"
[ -x "$bench" ] || cmake --build "$build" -j"$(nproc)" --target pfs_bench
cpu=$(( $(nproc) - 1 ))
work=$(mktemp -d /tmp/pfs_cycle_ab.XXXXXX)
trap 'rm -rf "$work"' EXIT

median() { sort -g | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | sed -n 1p); kernel clock source: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
settings=(cycle cycle+watch nanosecond)
cases=(raw timed timed_history)
for ((r = 0; r < rounds; r++)); do
  for s in "${settings[@]}"; do
    case $s in
      cycle) env=(PFS_WAIT_TIMER=CYCLE PFS_TIMER_WATCH=off) ;;
      cycle+watch) env=(PFS_WAIT_TIMER=CYCLE PFS_TIMER_WATCH=on PFS_TIMER_WATCH_INTERVAL_MS=10) ;;
      nanosecond) env=(PFS_WAIT_TIMER=NANOSECOND PFS_TIMER_WATCH=off) ;;
    esac
    env "${env[@]}" taskset -c "$cpu" "$bench" --benchmark_filter='BM_Mutex/(raw|timed|timed_history)$' \
      --benchmark_repetitions=5 --benchmark_report_aggregates_only=true 2>/dev/null |
      awk -v s="$s" '$1 ~ /_median$/ {n = $1; gsub(/BM_Mutex\/|_median/, "", n); print s, n, $4}' >>"$work/all"
  done
done
printf '%-14s' setting
for c in "${cases[@]}"; do printf '%18s' "$c ns"; done
printf '%14s\n' 'timed/cycle'
declare -A m
for s in "${settings[@]}"; do
  for c in "${cases[@]}"; do m[$s,$c]=$(awk -v s="$s" -v c="$c" '$1 == s && $2 == c {print $3}' "$work/all" | median); done
done
for s in "${settings[@]}"; do
  printf '%-14s' "$s"
  for c in "${cases[@]}"; do printf '%18.1f' "${m[$s,$c]}"; done
  printf '%14.2f\n' "$(awk -v a="${m[$s,timed]}" -v b="${m[cycle,timed]}" 'BEGIN {print a / b}')"
done
