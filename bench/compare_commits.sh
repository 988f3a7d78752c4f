#!/usr/bin/env bash
# The event path of two commits side by side, in one run: builds pfs_bench of
# BASE (a git worktree under build/compare/) and of the working tree, then runs
# them in turns, ROUNDS rounds of REPS interleaved repetitions each, and prints
# per benchmark the median of the round medians of each side and their ratio.
# Usage: bash bench/compare_commits.sh BASE [FILTER]
#   e.g. bash bench/compare_commits.sh 3dd5008 'BM_Mutex/(disabled|counted|timed)'
#   ROUNDS=3 REPS=9 by default; both builds Release.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: bench/compare_commits.sh BASE [FILTER]}
filter=${2:-BM_Mutex}
rounds=${ROUNDS:-3}
reps=${REPS:-9}
sha=$(git rev-parse --short "$base")
tree="build/compare/$sha"
if [ ! -d "$tree" ]; then
  git worktree add --detach "$tree" "$sha" >/dev/null 2>&1
fi
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
[ -f "$tree/build/CMakeCache.txt" ] || cmake -S "$tree" -B "$tree/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$tree/build" -j"$(nproc)" --target pfs_bench >/dev/null
[ -f build/CMakeCache.txt ] || cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target pfs_bench >/dev/null
out=$(mktemp -d /tmp/pfs_compare.XXXXXX)
trap 'rm -rf "$out"' EXIT

run() {  # side binary round
  "$2" --benchmark_filter="$filter" --benchmark_repetitions="$reps" --benchmark_enable_random_interleaving=true \
    --benchmark_report_aggregates_only=true 2>/dev/null |
    awk -v side="$1" '$1 ~ /_median$/ { name = $1; sub(/_median$/, "", name); print side, name, $2 }' >>"$out/all"
}
for r in $(seq "$rounds"); do
  run base "$tree/build/bench/pfs_bench" "$r"
  run head build/bench/pfs_bench "$r"
done
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'); clock source: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
echo "base $sha against the working tree: median of $rounds rounds of $reps repetitions (ns, cpu time)"
awk '
  function median(list,   n, v, i, j, t) {
    n = split(list, v, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  { key = $2; if (!(key in seen)) { seen[key] = 1; order[++k] = key } vals[$1, key] = vals[$1, key] " " $3 }
  END {
    printf "%-45s %10s %10s %8s\n", "benchmark", "base", "head", "head/base"
    for (i = 1; i <= k; i++) {
      key = order[i]
      if (!((("base", key) in vals) && (("head", key) in vals))) continue
      b = median(vals["base", key]); h = median(vals["head", key])
      printf "%-45s %10.1f %10.1f %8.3f\n", key, b, h, h / b
    }
  }' "$out/all"
