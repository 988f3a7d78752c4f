#!/usr/bin/env bash
# Page faults per connection of PostgreSQL under the interposer (issue 41): on a
# virtual machine a page fault costs microseconds, and a backend's region and the
# interposer's tables it writes after fork (copy-on-write of the postmaster's
# pages, first writes to its region's pages) are a large part of what a
# connection costs. Unlike the rate (bench/pgbench_connect.sh), the count hardly
# moves from run to run, so two builds compare on a noisy machine.
# For each side, a throwaway cluster of the Debian server runs `pgbench -n -C -c 1
# -S -t N` (a new backend per transaction) ROUNDS times; the figure is the minor
# and major faults of the postmaster and its reaped children (/proc/<pid>/stat)
# per connection, each round's. A side is "raw" (no interposer) or a
# libpfs_preload.so, with PFS_REGION=<tmpfs dir>/pg.%p.pfs and every instrument on.
# Usage: bash bench/pgbench_faults.sh raw build/agent/libpfs_preload.so [other.so...]
#        (ROUNDS=3 N=300; as root; ~20 s a side)
set -euo pipefail
source "$(dirname "$0")/../tests/live/lib.sh"
[ $# -ge 1 ] || { echo "usage: $0 raw|<libpfs_preload.so>..." >&2; exit 2; }
rounds=${ROUNDS:-3}
n=${N:-300}
work=$(mktemp -d /tmp/pfs_faults.XXXXXX)
regions=$(mktemp -d /dev/shm/pfs_faults.XXXXXX)
clusters_init "$work"
trap 'clusters_stop_all; rm -rf "$work" "$regions"' EXIT
chown postgres: "$regions"
echo "CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), clock source: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
echo "=== page faults a connection (pgbench -n -C -c 1 -S -t $n; postmaster and its children)"
k=0
for side in "$@"; do
  k=$((k + 1))
  if [ "$side" = raw ]; then
    cluster_start s$k
  else
    cp "$side" "$work/lib$k.so"
    mkdir "$regions/$k" && chown postgres: "$regions/$k"
    cluster_start s$k LD_PRELOAD="$work/lib$k.so" PFS_REGION="$regions/$k/pg.%p.pfs" PFS_INSTRUMENT='%=ON'
  fi
  port_var=PORT_s$k
  port=${!port_var}
  "$PG_BIN/pgbench" -q -i -s 1 -h "$work" -p "$port" -U postgres postgres >/dev/null 2>&1
  pm=$(head -1 "$CLUSTER_DIR/s$k/postmaster.pid")
  faults() { awk '{print $10 + $11 + $12 + $13}' "/proc/$pm/stat"; }  # after "(postgres)": no spaces
  each=""
  for _ in $(seq "$rounds"); do
    before=$(faults)
    "$PG_BIN/pgbench" -n -C -c 1 -S -t "$n" -h "$work" -p "$port" -U postgres postgres >/dev/null 2>&1
    each+="$(( ($(faults) - before) / n )) "
  done
  printf '  %-60s %s\n' "$side" "$each"
done
