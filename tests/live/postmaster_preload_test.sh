#!/usr/bin/env bash
# PostgreSQL's postmaster, a real pre-forking server from Debian, under the
# interposer with PFS_REGION=<dir>/pg.%p.pfs: every process it forks (checkpointer,
# background writer, WAL writer, autovacuum launcher, each client's backend)
# records into a region of its own, named by its pid. A client creates a table and
# fills it, another runs CHECKPOINT; the test then reads each region and checks
# that the table's data file shows the filling backend's writes (it extends the
# file) in that backend's region, the checkpointer's in the checkpointer's, and
# nothing in the postmaster's. Prints the bytes each process wrote to the file.
# Usage: bash tests/live/postmaster_preload_test.sh [build-dir]   (about 10 s)
source "$(dirname "$0")/lib.sh"
build=${1:-build}
case "$build" in /*) ;; *) build="$PWD/$build" ;; esac
bin=$PG_BIN
inspect="$build/tests/preload_programs/pl_inspect"
preload="$build/agent/libpfs_preload.so"
for f in "$inspect" "$preload" "$bin/postgres"; do
  [ -e "$f" ] || { echo "postmaster_preload_test: $f is missing" >&2; exit 1; }
done

work=$(mktemp -d /tmp/pfs_postmaster.XXXXXX)
clusters_init "$work"
mkdir "$work/regions"
[ "$(id -u)" = 0 ] && chown postgres: "$work/regions"
trap 'clusters_stop_all; rm -rf "$work"' EXIT
fail() {
  echo "FAILED: $*" >&2
  tail -20 "$work/data.log" >&2 || true
  exit 1
}

cluster_start data LD_PRELOAD="$preload" PFS_REGION="$work/regions/pg.%p.pfs" PFS_INSTRUMENT="wait/io/file/%=ON" \
  PFS_PRELOAD_VERBOSE=1 || fail "the server did not start"
port=$PORT_data
psql=("$bin/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$work" -p "$port" -U postgres -d postgres)

out=$("${psql[@]}" <<'SQL'
SELECT pg_backend_pid();
CREATE TABLE pfs_filled (id int, pad text);
INSERT INTO pfs_filled SELECT g, repeat('x', 200) FROM generate_series(1, 50000) g;
SELECT pg_relation_filepath('pfs_filled');
SQL
)
backend=$(sed -n 1p <<<"$out")
relpath=$(sed -n 2p <<<"$out")
checkpointer=$("${psql[@]}" -c "SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'")
"${psql[@]}" -c "CHECKPOINT"
postmaster=$(head -1 "$work/data/postmaster.pid")
cluster_stop data

regions=$(ls "$work/regions" | wc -l)
echo "=== $regions regions, one per process of the server; $relpath (pfs_filled) by process:"
# Bytes each region's process wrote to the table's file (file_summary_by_instance).
written() {
  "$inspect" "$1" file_summary_by_instance "$relpath" | awk -F'\t' '
    NR == 1 { for (i = 1; i <= NF; i++) if ($i == "sum_number_of_bytes_write") c = i; next }
    { n += $c } END { print n + 0 }'
}
for r in "$work/regions"/pg.*.pfs; do
  pid=$(basename "$r" .pfs | sed 's/^pg\.//')
  role=other
  [ "$pid" = "$backend" ] && role="client backend"
  [ "$pid" = "$checkpointer" ] && role=checkpointer
  [ "$pid" = "$postmaster" ] && role=postmaster
  n=$(written "$r")
  [ "$n" -gt 0 ] || [ "$role" != other ] && printf '  %-8s %-15s %10s bytes written\n' "$pid" "$role" "$n"
done
[ "$regions" -ge 5 ] || fail "expected a region per server process, found $regions"
[ -f "$work/regions/pg.$backend.pfs" ] || fail "no region of the client backend $backend"
[ "$(written "$work/regions/pg.$backend.pfs")" -gt 0 ] || fail "the backend's region has no write to $relpath"
[ "$(written "$work/regions/pg.$checkpointer.pfs")" -gt 0 ] ||
  fail "the checkpointer's region has no write to $relpath"
[ -f "$work/regions/pg.$postmaster.pfs" ] || fail "no region of the postmaster $postmaster"
[ "$(written "$work/regions/pg.$postmaster.pfs")" -eq 0 ] || fail "the postmaster's region has writes to $relpath"
grep -q "forked child records into $work/regions/pg.$backend.pfs" "$work/data.log" ||
  fail "the backend did not say where it records (PFS_PRELOAD_VERBOSE)"
echo "=== postmaster preload test passed"
