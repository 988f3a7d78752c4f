#!/usr/bin/env bash
# A directory of regions read as one server (option region_directory), on live
# processes and a throwaway PostgreSQL: tests/fork/pfs_prefork.cpp with
# PFS_REGION=<dir>/prefork.%p.pfs forks workers that each record into a region of
# their own and stay alive (STAY_UNTIL) locking a mutex.
# - every process's rows, with its process_id and program; status says each alive;
#   each worker's data file io in file_summary_by_instance under its own pid;
# - an UPDATE of setup_instruments through the server reaches every live process
#   at COMMIT: the workers' lock counts, growing before, stop in every region;
# - a damaged file in the directory is a WARNING, the others still show;
# - after the processes exit their regions stay readable, status says not alive.
# Usage (as root): bash tests/live/fdw_directory_test.sh
source "$(dirname "$0")/lib.sh"

workers=4
live_session pfs_prefork

WORK=$(mktemp -d /tmp/pfs_directory.XXXXXX)
chmod 755 "$WORK"
mkdir -m 755 "$WORK/regions" "$WORK/data"
PREFORK_PID=
trap '[ -n "$PREFORK_PID" ] && { touch "$WORK/stop"; wait "$PREFORK_PID" 2>/dev/null || true; }; rm -rf "$WORK"' EXIT

PFS_REGION="$WORK/regions/prefork.%p.pfs" PFS_REGION_MODE=0666 PFS_INSTRUMENT='%=ON' WORKERS=$workers LOCKS=200 STAY_UNTIL="$WORK/stop" \
  build/tests/pfs_prefork "$WORK/data" >"$WORK/prefork.out" 2>&1 &
PREFORK_PID=$!
for _ in $(seq 200); do
  [ "$(ls "$WORK/data" | grep -c '^worker\.')" = "$workers" ] && break
  sleep 0.05
done
[ "$(ls "$WORK/regions" | grep -c '\.pfs$')" = $((workers + 1)) ] ||
  fail "expected $((workers + 1)) regions: $(ls "$WORK/regions") $(cat "$WORK/prefork.out")"

psql -X -q -v ON_ERROR_STOP=1 -v dir="$WORK/regions" <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS perfschema_fdw;
CREATE SERVER fleet FOREIGN DATA WRAPPER perfschema_fdw OPTIONS (region_directory :'dir');
CREATE SCHEMA ps;
IMPORT FOREIGN SCHEMA performance_schema FROM SERVER fleet INTO ps;
SQL

# --- every process, alive
psql -X -c "SELECT process_id, program, variable_value AS alive, region_file
              FROM ps.status WHERE variable_name = 'provider_alive' ORDER BY process_id"
check "status has one row per region, each alive" \
  "[ \"$(q "SELECT count(*) || ' ' || sum(variable_value) FROM ps.status WHERE variable_name = 'provider_alive'")\" = '$((workers + 1)) $((workers + 1))' ]"
check "every row says which program wrote it" \
  "[ \"$(q "SELECT string_agg(DISTINCT program, ',') FROM ps.events_waits_summary_global_by_event_name")\" = pfs_prefork ]"
check "the regions' pids are the processes' (parent and workers)" \
  "[ \"$(q "SELECT count(DISTINCT process_id) FROM ps.events_waits_summary_global_by_event_name")\" = $((workers + 1)) ] &&
   [ \"$(q "SELECT count(*) FROM ps.status WHERE variable_name = 'provider_alive' AND process_id = $PREFORK_PID")\" = 1 ]"
check "each worker's data file io is in its own region" \
  "[ \"$(q "SELECT count(*) FROM ps.file_summary_by_instance
             WHERE file_name LIKE '%/worker.' || process_id || '.data' AND sum_number_of_bytes_write = 4096")\" = $workers ]"
check "a condition on process_id reads that process only" \
  "[ \"$(q "SELECT string_agg(DISTINCT process_id::text, ',') FROM ps.events_waits_summary_global_by_event_name
             WHERE process_id = $PREFORK_PID")\" = $PREFORK_PID ]"

# --- Prometheus: per-process series from Debian's exporter
metrics=$(scrape_exporter tools/prometheus/queries_by_process.yaml "$WORK/exporter.log") ||
  fail "no /metrics: $(grep -v "^\s" "$WORK/exporter.log" | head -20)"
echo "$metrics" | grep '^perfschema_process' | sed -n 1,6p
check "the exporter reports no scrape error" "grep -q '^pg_exporter_last_scrape_error 0' <<<\"\$metrics\""
check "every process is alive in perfschema_process_alive" \
  "[ \"$(echo "$metrics" | grep -c '^perfschema_process_alive{process_id=\"[0-9]*\",program=\"pfs_prefork\"[^}]*} 1$')\" = $((workers + 1)) ]"
check "each worker's mutex waits are a series of their own" \
  "[ \"$(echo "$metrics" | grep '^perfschema_process_waits_by_class_count_star{' | grep -c 'class=\"wait/synch/mutex\"')\" = $((workers + 1)) ]"
check "the totals over processes keep queries.yaml's names" \
  "grep -q '^perfschema_waits_count_star{event_name=\"wait/synch/mutex/prefork/queue_lock\"' <<<\"\$metrics\""
check "the wait latency histograms are summed over the processes" \
  "grep -q '^perfschema_wait_latency_seconds_bucket{event_name=\"wait/synch/mutex/prefork/queue_lock\",.*le=\"1e-09\"' <<<\"\$metrics\""
check "the series are bounded" "[ \"$(echo "$metrics" | grep -c '^perfschema_')\" -le 400 ]"

# --- an UPDATE through the server reaches every live process at COMMIT
lock_counts() {
  q "SELECT string_agg(process_id || ':' || count_star, ' ' ORDER BY process_id)
       FROM ps.events_waits_summary_global_by_event_name
      WHERE event_name = 'wait/synch/mutex/prefork/queue_lock' AND process_id <> $PREFORK_PID"
}
before=$(lock_counts); sleep 0.3; after=$(lock_counts)
check "the workers' lock counts grow while the instrument is enabled" "[ \"$before\" != \"$after\" ]"
updated=$(q "WITH u AS (UPDATE ps.setup_instruments SET enabled = 'NO'
                         WHERE name = 'wait/synch/mutex/prefork/queue_lock' RETURNING 1)
             SELECT count(*) FROM u")
check "the UPDATE changed the instrument in every region" "[ \"$updated\" = $((workers + 1)) ]"
check "every region shows it disabled" \
  "[ \"$(q "SELECT count(*) FROM ps.setup_instruments
             WHERE name = 'wait/synch/mutex/prefork/queue_lock' AND enabled = 'NO'")\" = $((workers + 1)) ]"
sleep 0.1  # an acquisition that started before the COMMIT may still end
before=$(lock_counts); sleep 0.3; after=$(lock_counts)
echo "queue_lock counts 0.3 s apart after the UPDATE: $before / $after"
check "every worker stopped counting the disabled instrument" "[ \"$before\" = \"$after\" ]"

# --- a damaged file hides nothing
head -c 8192 /dev/urandom >"$WORK/regions/garbage.pfs"
psql -X -At -c "SELECT count(DISTINCT process_id) FROM ps.events_waits_summary_global_by_event_name" \
  >"$WORK/psql.out" 2>"$WORK/psql.err"
cat "$WORK/psql.err"
check "a damaged file is skipped with a WARNING" "grep -q 'WARNING:  skipping region file' '$WORK/psql.err'"
check "... and the other regions still show" "[ \"$(cat "$WORK/psql.out")\" = $((workers + 1)) ]"
rm "$WORK/regions/garbage.pfs"

# --- exited processes: still readable, not alive
touch "$WORK/stop"
wait "$PREFORK_PID" || fail "pfs_prefork failed: $(cat "$WORK/prefork.out")"
PREFORK_PID=
check "after exit, status says no region is alive" \
  "[ \"$(q "SELECT count(*) || ' ' || sum(variable_value) FROM ps.status WHERE variable_name = 'provider_alive'")\" = '$((workers + 1)) 0' ]"
check "... and their rows stay readable" \
  "[ \"$(q "SELECT count(DISTINCT process_id) FROM ps.file_summary_by_instance")\" = $((workers + 1)) ]"
rm "$WORK/regions/"*.pfs
check "removed files are gone from the server" \
  "[ \"$(q "SELECT count(*) FROM ps.events_waits_summary_global_by_event_name")\" = 0 ]"
echo "=== fdw_directory_test: all checks passed"
