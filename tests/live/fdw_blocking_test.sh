#!/usr/bin/env bash
# Who blocks whom, from SQL, on a live instrumented process (tools/pfs_live.cpp
# with --deadlocks=2,3) and a throwaway PostgreSQL:
# - lock_wait_cycles (perfschema_create_views) shows a 2-thread and a 3-thread
#   deadlock while they last, each thread waiting for the next one's lock, and
#   nothing once the process is killed;
# - lock_waits names the holder of the slow pair's lock, the source of its
#   acquisition and how long it has held it;
# - lock_contention_by_instance counts the slow pair's contended waits under the
#   holder's source, and TRUNCATE resets it.
# Usage (as root): bash tests/live/fdw_blocking_test.sh
source "$(dirname "$0")/lib.sh"
live_session

live_workdir
live_start_provider --hot-threads=1 --hold-us=300000 --deadlocks=2,3
live_import
q "CREATE SCHEMA sys" >/dev/null
q "SELECT count(*) FROM perfschema_create_views('sys', 'ps')" >/dev/null

# --- the deadlocks, while they last
for _ in $(seq 100); do
  [ "$(q "SELECT count(*) FROM sys.lock_wait_cycles")" = 2 ] && break
  sleep 0.05
done
psql -X -c "SELECT threads_in_cycle, thread_names, waiting_for_locks, waiting_sources FROM sys.lock_wait_cycles"
check "lock_wait_cycles shows the two deadlocks (lengths 2 and 3)" \
  "[ \"$(q "SELECT string_agg(threads_in_cycle::text, ',' ORDER BY threads_in_cycle) FROM sys.lock_wait_cycles")\" = 2,3 ]"
check "each cycle waits on its own locks only" \
  "[ \"$(q "SELECT bool_and(l = format('wait/synch/mutex/live/deadlock%s_lock', threads_in_cycle))
               FROM sys.lock_wait_cycles, unnest(waiting_for_locks) AS l")\" = t ]"
check "every thread of a cycle waits for the next one (lock_waits agrees)" \
  "[ \"$(q "SELECT bool_and(w.blocking_thread_id = c.thread_ids[1 + u.n % c.threads_in_cycle])
               FROM sys.x\$lock_wait_cycles c,
                    unnest(c.thread_ids) WITH ORDINALITY AS u(id, n)
               JOIN sys.x\$lock_waits w ON w.waiting_thread_id = u.id")\" = t ]"
check "the cycles have lasted (cycle_age > 0)" \
  "[ \"$(q "SELECT bool_and(cycle_age > 0) FROM sys.x\$lock_wait_cycles")\" = t ]"

# --- the slow pair: a wait that names its holder, and how long it has held the lock
seen=
for _ in $(seq 100); do
  seen=$(q "SELECT blocking_thread || '|' || blocking_lock_source || '|' || (blocking_lock_held >= wait_age)
              FROM sys.x\$lock_waits WHERE locked_lock = 'wait/synch/mutex/live/slow_lock'
               AND blocking_lock_source IS NOT NULL LIMIT 1")
  [ -n "$seen" ] && break
  sleep 0.05
done
echo "slow pair, from lock_waits: $seen"
psql -X -c "SELECT wait_age, locked_lock, waiting_thread, blocking_thread, blocking_lock_source, blocking_lock_held
              FROM sys.lock_waits ORDER BY locked_lock, waiting_thread_id"
check "lock_waits names the slow lock's holder and the source of its acquisition" \
  "[[ \"$seen\" == thread/live/slow_holder\|pfs_live.cpp:*\|true ]]"
holder_source=$(echo "$seen" | cut -d'|' -f2)

# --- contention by the holder's source
contended() {
  q "SELECT coalesce(sum(count_star), 0) FROM ps.lock_contention_by_instance
      WHERE event_name = 'wait/synch/mutex/live/slow_lock' AND blocking_source = '$holder_source'"
}
# Let a few contended waits pile up: the pair goes on contending, so a wait or two
# may be counted again between TRUNCATE and the next read.
for _ in $(seq 100); do
  before=$(contended)
  [ "$before" -ge 5 ] && break
  sleep 0.05
done
check "lock_contention_by_instance counts the slow pair's waits under $holder_source ($before)" "[ $before -gt 0 ]"
q "TRUNCATE ps.lock_contention_by_instance"
after=$(contended)
check "TRUNCATE resets it ($before -> $after)" "[ $after -lt $before ]"

# --- the process killed: its last waits are not waits any more
kill -KILL "$PROVIDER_PID"
wait "$PROVIDER_PID" 2>/dev/null || true
PROVIDER_PID=
check "no cycle once the process is gone" "[ \"$(q "SELECT count(*) FROM sys.lock_wait_cycles")\" = 0 ]"
check "no lock wait either" "[ \"$(q "SELECT count(*) FROM sys.lock_waits")\" = 0 ]"
echo "=== fdw_blocking_test: all checks passed"
