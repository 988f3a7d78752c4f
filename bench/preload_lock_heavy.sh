#!/usr/bin/env bash
# The lock-heavy case: sysbench mutex with two threads on 64 mutexes
# (--mutex-num=64 --mutex-loops=1000 --mutex-locks=2000000), wall time of the
# run, plain and under the interposer with every instrument on and timed and
# every consumer on; the sides alternate, RUNS rounds, medians and their ratio.
# Further build directories after the first add their interposers as more
# sides (e.g. an older commit's build, to compare two agents in one run).
# Usage: bash bench/preload_lock_heavy.sh [build-dir [other-build-dir...]]
#        (RUNS=7 by default; about 20 s per round)
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- build
builds=()
for b in "$@"; do
  case "$b" in /*) ;; *) b="$PWD/$b" ;; esac
  [ -f "$b/agent/libpfs_preload.so" ] || cmake --build "$b" -j"$(nproc)" --target pfs_preload
  builds+=("$b")
done
runs=${RUNS:-7}
command -v sysbench >/dev/null || { echo "preload_lock_heavy: sysbench is not installed" >&2; exit 1; }
work=$(mktemp -d /tmp/pfs_lock_heavy.XXXXXX)
trap 'rm -rf "$work"' EXIT
echo "CPU: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1); $(nproc) CPUs;" \
  "clock source: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo unknown)"

median() { sort -g | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
sysbench_args=(mutex --threads=2 --mutex-num=64 --mutex-loops=1000 --mutex-locks=2000000 run)
seconds() { sed -n 's/^ *total time: *\([0-9.]*\)s/\1/p'; }

one() {  # side -> seconds
  if [ "$1" = plain ]; then
    sysbench "${sysbench_args[@]}" | seconds
  else
    rm -f "$work/r.pfs"
    LD_PRELOAD="$1/agent/libpfs_preload.so" PFS_REGION="$work/r.pfs" PFS_INSTRUMENT='%=ON' \
      sysbench "${sysbench_args[@]}" | seconds
  fi
}

sides=(plain "${builds[@]}")
declare -A times
for ((i = 0; i < runs; i++)); do
  for s in "${sides[@]}"; do times[$s]+="$(one "$s") "; done
done
echo "=== sysbench mutex, 2 threads, 64 mutexes: seconds (median of $runs, sides alternating)"
plain=$(tr ' ' '\n' <<<"${times[plain]}" | grep . | median)
printf '  %-50s %7.3f s\n' plain "$plain"
for s in "${builds[@]}"; do
  m=$(tr ' ' '\n' <<<"${times[$s]}" | grep . | median)
  printf '  %-50s %7.3f s  %+6.1f%%   (%s)\n' "interposer of ${s#"$PWD"/}" "$m" \
    "$(awk -v a="$m" -v b="$plain" 'BEGIN { print (a / b - 1) * 100 }')" "${times[$s]% }"
done
