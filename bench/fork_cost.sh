#!/usr/bin/env bash
# What a forked child costs under the interposer (issue 41): bench/fork_cost.c forks
# N children that each lock a mutex once and exit, and times each fork+exit+wait
# (the median of N) in three settings:
#   plain   no interposer
#   one     the interposer, one region for the parent (PFS_REGION without %p: the
#           children record nothing)
#   %p      the interposer, PFS_REGION=<dir>/app.%p.pfs: every child records into
#           a region of its own, made in the fork
# every instrument on (PFS_INSTRUMENT='%=ON'). Ratios are to plain. For %p it also
# prints what one child's region holds: its size, its disk (du), its pages in the
# page cache (fincore), and the child's memory beyond its parent (Private_Clean +
# Private_Dirty of its smaps_rollup, less the same for a plain child).
# The settings alternate, ROUNDS rounds, each figure the median of the rounds'.
# It also prints the page faults per fork (parent and children, getrusage) of each
# setting and what one page fault costs here: on a virtual machine whose page
# faults are dear (15-20 us on a 2 vCPU PVM guest), the faults are most of a fork's
# time, and their count does not vary from run to run as the time does.
# With BEFORE=<an older libpfs_preload.so> two more settings, one region and %p
# under that library, run in the same rounds (before/after side by side on a shared
# machine).
# Usage: bash bench/fork_cost.sh [build-dir]   (N=200 ROUNDS=3 by default, N_PID=N; ~1 min)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
case "$build" in /*) ;; *) build="$PWD/$build" ;; esac
n=${N:-200}
n_pid=${N_PID:-$n}  # fewer for %p when each child copies a whole region
rounds=${ROUNDS:-3}
preload="$build/agent/libpfs_preload.so"
prog="$build/bench/fork_cost"
cmake --build "$build" -j2 --target pfs_preload fork_cost >/dev/null
work=$(mktemp -d /tmp/pfs_fork_cost.XXXXXX)
trap 'rm -rf "$work"' EXIT

median() { sort -g | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
field() { sed -n "s/^$1=//p" <<<"$2"; }

declare -A times cpu private faults
fault_us=""
run_setting() {  # name: one run of N forks, its median appended to times[name]
  local out
  rm -rf "$work/regions" && mkdir "$work/regions"
  case $1 in
    plain) out=$("$prog" "$n") ;;
    one) out=$(env LD_PRELOAD="$preload" PFS_REGION="$work/regions/app.pfs" PFS_INSTRUMENT='%=ON' "$prog" "$n") ;;
    pid) out=$(env LD_PRELOAD="$preload" PFS_REGION="$work/regions/app.%p.pfs" PFS_INSTRUMENT='%=ON' \
      "$prog" "$n_pid" "$work/regions/app.%p.pfs") ;;
    before) out=$(env LD_PRELOAD="$BEFORE" PFS_REGION="$work/regions/app.%p.pfs" PFS_INSTRUMENT='%=ON' \
      "$prog" "$n_pid" "$work/regions/app.%p.pfs") ;;
    before_one) out=$(env LD_PRELOAD="$BEFORE" PFS_REGION="$work/regions/app.pfs" PFS_INSTRUMENT='%=ON' "$prog" "$n") ;;
  esac
  times[$1]+="$(field median_us "$out") "
  cpu[$1]+="$(field cpu_us "$out") "
  faults[$1]+="$(field faults "$out") "
  [ "$1" = plain ] && fault_us+="$(field fault_us "$out") "
  private[$1]+="$(field child_private_kb "$out") "
  if [ "$1" = pid ]; then
    last="$work/regions/app.$(field last_child "$out").pfs"
    [ -f "$last" ] || { echo "fork_cost: no region $last" >&2; exit 1; }
    child_size=$(stat -c %s "$last")
    child_disk_kb=$(du -k "$last" | cut -f1)
    child_cache_kb=$(fincore -b -n -o RES "$last" | awk '{print int($1 / 1024)}')
    dir_kb=$(du -sk "$work/regions" | cut -f1)
    files=$(find "$work/regions" -name '*.pfs' | wc -l)
  fi
}
for ((r = 0; r < rounds; r++)); do
  for s in plain one pid ${BEFORE:+before before_one}; do run_setting "$s"; done
done
m() { tr ' ' '\n' <<<"${times[$1]}" | grep . | median; }
p() { tr ' ' '\n' <<<"${private[$1]}" | grep . | median; }
c() { tr ' ' '\n' <<<"${cpu[$1]}" | grep . | median; }
f() { tr ' ' '\n' <<<"${faults[$1]}" | grep . | median; }
plain=$(m plain) one=$(m one) pid=$(m pid)
echo "CPU: $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), clock source: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
echo "=== fork + child's lock + exit + wait, us (median of $rounds rounds of the median of $n)"
printf '  %-44s %9.1f us\n' "no interposer" "$plain"
printf '  %-44s %9.1f us  x%.2f\n' "interposer, one region (no %p)" "$one" "$(awk -v a="$one" -v b="$plain" 'BEGIN {print a / b}')"
printf '  %-44s %9.1f us  x%.2f\n' "interposer, a region per child (%p)" "$pid" "$(awk -v a="$pid" -v b="$plain" 'BEGIN {print a / b}')"
if [ -n "${BEFORE:-}" ]; then
  before=$(m before) before_one=$(m before_one)
  printf '  %-44s %9.1f us  x%.2f  (after/before x%.2f)\n' "%p under BEFORE" "$before" \
    "$(awk -v a="$before" -v b="$plain" 'BEGIN {print a / b}')" "$(awk -v a="$pid" -v b="$before" 'BEGIN {print a / b}')"
  printf '  %-44s %9.1f us  x%.2f  (after/before x%.2f)\n' "one region under BEFORE" "$before_one" \
    "$(awk -v a="$before_one" -v b="$plain" 'BEGIN {print a / b}')" "$(awk -v a="$one" -v b="$before_one" 'BEGIN {print a / b}')"
fi
echo "=== CPU time (user + system) of parent and children per fork, us (median of $rounds rounds)"
for s in plain one pid ${BEFORE:+before before_one}; do
  printf '  %-44s %9.1f us  x%.2f\n' "$s" "$(c $s)" "$(awk -v a="$(c $s)" -v b="$(c plain)" 'BEGIN {print a / b}')"
done
echo "=== page faults of parent and children per fork (getrusage; the same in every round)"
for s in plain one pid ${BEFORE:+before before_one}; do
  printf '  %-44s %9.1f     +%.1f\n' "$s" "$(f $s)" "$(awk -v a="$(f $s)" -v b="$(f plain)" 'BEGIN {print a - b}')"
done
printf '  %-44s %9.2f us  (the first write to a new page, median of %d)\n' "one page fault on this machine" \
  "$(tr ' ' '\n' <<<"$fault_us" | grep . | median)" "$rounds"
echo "=== one child's region (%p)"
printf '  %-44s %9d KiB\n' "file size" "$((child_size / 1024))"
printf '  %-44s %9d KiB\n' "on disk (du)" "$child_disk_kb"
printf '  %-44s %9d KiB\n' "in the page cache (fincore)" "$child_cache_kb"
printf '  %-44s %9d KiB (%d files: the parent and one child)\n' "directory (du)" "$dir_kb" "$files"
echo "=== a child's memory beyond its parent (Private_Clean + Private_Dirty), KiB"
printf '  %-44s %9d KiB\n' "no interposer" "$(p plain)"
printf '  %-44s %9d KiB\n' "interposer, one region" "$(p one)"
printf '  %-44s %9d KiB  (+%d over no interposer)\n' "interposer, %p" "$(p pid)" "$(( $(p pid) - $(p plain) ))"
