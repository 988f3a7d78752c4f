#!/usr/bin/env bash
# PostgreSQL's connection rate under the interposer (issue 41, item 1): pgbench -n
# -C -c 1 -S (a new connection, so a new backend process, per transaction) against
# two throwaway clusters of the Debian server, side by side:
#   raw     no interposer
#   %p      postgres started under LD_PRELOAD with PFS_REGION=<dir>/pg.%p.pfs,
#           every instrument on (PFS_INSTRUMENT='%=ON'): each backend records into
#           a region of its own, made in its fork
#   one     (with ONE=1) the same with one region, no %p: the backends record nothing,
#           so the difference to %p is what their regions cost
# and with BEFORE=<an older libpfs_preload.so> %p under that library too. The
# settings alternate, ROUNDS rounds of SECONDS_EACH seconds each; prints the median tps of each
# and its ratio to raw (the issue's target: >= 0.8), and what the regions
# directory holds after (retention keeps it bounded).
# REGIONS_IN=<dir> puts the regions directories there instead of in the work
# directory under /tmp (e.g. /dev/shm: a tmpfs, whose first write to a page costs
# less than on a file system that allocates blocks for it, such as ext4).
# Usage: bash bench/pgbench_connect.sh [build-dir]   (ROUNDS=3 SECONDS_EACH=5; ~1 min)
set -euo pipefail
source "$(dirname "$0")/../tests/live/lib.sh"
build=${1:-build}
case "$build" in /*) ;; *) build="$PWD/$build" ;; esac
rounds=${ROUNDS:-3}
secs=${SECONDS_EACH:-5}
work=$(mktemp -d /tmp/pfs_pgbench.XXXXXX)
clusters_init "$work"
# The server user reads the libraries from the work directory.
cp "$build/agent/libpfs_preload.so" "$work/after.so"
settings=(raw pid)
[ -n "${ONE:-}" ] && settings+=(one)
if [ -n "${BEFORE:-}" ]; then
  cp "$BEFORE" "$work/before.so"
  settings+=(before)
fi
regions=$work
if [ -n "${REGIONS_IN:-}" ]; then
  regions=$(mktemp -d "$REGIONS_IN/pfs_pgbench_regions.XXXXXX")
  chmod 755 "$regions"
fi
trap 'clusters_stop_all; rm -rf "$work" "$regions"' EXIT
for s in "${settings[@]}"; do
  mkdir "$regions/regions_$s"
  [ "$(id -u)" = 0 ] && chown postgres: "$regions/regions_$s"
  case $s in
    raw) cluster_start "$s" ;;
    pid) cluster_start "$s" LD_PRELOAD="$work/after.so" PFS_REGION="$regions/regions_$s/pg.%p.pfs" PFS_INSTRUMENT='%=ON' ;;
    one) cluster_start "$s" LD_PRELOAD="$work/after.so" PFS_REGION="$regions/regions_$s/pg.pfs" PFS_INSTRUMENT='%=ON' ;;
    before) cluster_start "$s" LD_PRELOAD="$work/before.so" PFS_REGION="$regions/regions_$s/pg.%p.pfs" \
      PFS_INSTRUMENT='%=ON' ;;
  esac
  port_var="PORT_$s"
  "$PG_BIN/pgbench" -q -i -s 1 -h "$work" -p "${!port_var}" -U postgres postgres >/dev/null 2>&1
done

median() { sort -g | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
# The server's CPU time so far (clock ticks): the postmaster's own and that of its
# exited children (each backend), user and system, from /proc/<pid>/stat.
server_ticks() {
  local pid
  pid=$(head -1 "$work/$1/postmaster.pid")
  awk '{sub(/.*\) /, ""); print $12 + $13 + $14 + $15}' "/proc/$pid/stat"
}
hz=$(getconf CLK_TCK)
declare -A tps cpu
for ((r = 0; r < rounds; r++)); do
  for s in "${settings[@]}"; do
    port_var="PORT_$s"
    before_ticks=$(server_ticks "$s")
    out=$("$PG_BIN/pgbench" -n -C -c 1 -S -T "$secs" -h "$work" -p "${!port_var}" -U postgres postgres 2>/dev/null)
    t=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out" | sed -n 1p)
    n=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out")
    tps[$s]+="$t "
    # The server's CPU per connection, in µs (varies less than the rate when
    # other work shares the machine).
    cpu[$s]+="$(awk -v d="$(($(server_ticks "$s") - before_ticks))" -v n="$n" -v hz="$hz" \
      'BEGIN {printf "%.0f", d * 1e6 / hz / n}') "
  done
done
m() { tr ' ' '\n' <<<"${tps[$1]}" | grep . | median; }
mc() { tr ' ' '\n' <<<"${cpu[$1]}" | grep . | median; }
raw=$(m raw)
echo "CPU: $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), clock source:" \
  "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
echo "=== pgbench -n -C -c 1 -S -T $secs: tps, median of $rounds alternating rounds (each: ${tps[raw]})"
printf '  %-44s %9.1f tps  server CPU %6.0f us a connection\n' "no interposer" "$raw" "$(mc raw)"
for s in "${settings[@]:1}"; do
  label="interposer, a region per backend (%p)"
  [ "$s" = before ] && label="the same under BEFORE"
  [ "$s" = one ] && label="interposer, one region (no %p)"
  printf '  %-44s %9.1f tps  x%.2f of raw  (rounds: %s)\n' "$label" "$(m "$s")" \
    "$(awk -v a="$(m "$s")" -v b="$raw" 'BEGIN {print a / b}')" "${tps[$s]}"
  printf '  %-44s %9.0f us a connection, x%.2f of raw  (rounds: %s)\n' "  server CPU" "$(mc "$s")" \
    "$(awk -v a="$(mc "$s")" -v b="$(mc raw)" 'BEGIN {print a / b}')" "${cpu[$s]}"
  printf '  %-44s %9d files, %d KiB (du)\n' "  its regions directory" \
    "$(find "$regions/regions_$s" -name '*.pfs' | wc -l)" "$(du -sk "$regions/regions_$s" | cut -f1)"
done
