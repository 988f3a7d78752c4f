#!/usr/bin/env bash
# A region file must never take PostgreSQL down (issue 18), tested against a live
# instrumented process (tools/pfs_live.cpp) on a throwaway PostgreSQL:
# - the region is truncated to 4096 bytes and copied back FAULT_ROUNDS (200) times
#   while 60 scans of events_waits_history_long and 40 setup UPDATEs run: the
#   server log must not show one backend "terminated by signal", every statement
#   either succeeds or fails with a clear error, the server and the instrumented
#   program keep running, and a scan after the last restore works;
# - the backend has the SIGBUS handler from its first scan on, and keeps it after
#   the transaction (/proc/PID/status SigCgt);
# - a FIFO or a directory as region: refused at CREATE SERVER, and when a FIFO
#   appears later at a server's path, a scan fails within a second;
# - a COMMIT waiting for the region's setup lock (held by tools/pfs_hold_setup_lock)
#   ends at statement_timeout, and at pg_cancel_backend; while it waits,
#   pg_stat_activity shows it in the wait event PerfschemaSetupLock (PostgreSQL 17
#   and later: WaitEventExtensionNew) or Extension (15).
# Usage (as root): bash tests/live/fdw_fault_test.sh
source "$(dirname "$0")/lib.sh"

live_session pfs_hold_setup_lock

rounds=${FAULT_ROUNDS:-200}
live_workdir
LIVE_ENV=(PFS_WAITS_HISTORY_LONG_SIZE=200000)
live_start_provider --hot-threads=2
live_import
log=$(server_log)
log_lines_before=$(wc -l <"$log")
sleep 0.5
cp "$REGION" "$WORK/saved.pfs"
check "history_long has rows before the faults" \
  "[ \"$(q "SELECT count(*) > 1000 FROM ps.events_waits_history_long")\" = t ]"

# The SIGBUS handler is the backend's from its first scan on (it chains every other
# fault to the handler it found: none, the default action).
sigbus_in_backend=$(psql -X -q -At -v ON_ERROR_STOP=1 <<'SQL'
SELECT pg_backend_pid() AS pid \gset
\setenv PFS_BACKEND :pid
BEGIN;
SELECT count(*) > 0 FROM ps.events_waits_current;
\! m=$(sed -n 's/^SigCgt:\t//p' /proc/$PFS_BACKEND/status); echo "in:$((0x$m & 64))"
COMMIT;
\! m=$(sed -n 's/^SigCgt:\t//p' /proc/$PFS_BACKEND/status); echo "after:$((0x$m & 64))"
SQL
)
check "a transaction that scans installs the SIGBUS handler, and the backend keeps it ($(echo $sigbus_in_backend))" \
  "[ \"$(echo $sigbus_in_backend)\" = 't in:64 after:64' ]"

# --- truncation while 60 scans and 40 setup UPDATEs run
(
  for _ in $(seq "$rounds"); do
    truncate -s 4096 "$REGION"
    sleep 0.00$((RANDOM % 5))
    cp "$WORK/saved.pfs" "$REGION"  # same inode: cp truncates, then writes
    sleep 0.0$((RANDOM % 3))$((RANDOM % 10))
  done
  touch "$WORK/truncator.done"
) &
truncator=$!
scanner() {  # n: statements, out: file of one outcome per line
  for _ in $(seq "$1"); do
    if out=$(psql -X -q -At -c "SELECT count(*) FROM ps.events_waits_history_long" 2>&1); then
      echo "ok"
    else
      echo "error: ${out%%$'\n'*}"
    fi
    sleep 0.0$((RANDOM % 5))
  done >"$2"
}
updater() {
  for i in $(seq "$1"); do
    yn=$([ $((i % 2)) = 0 ] && echo YES || echo NO)
    if out=$(psql -X -q -At -c "UPDATE ps.setup_instruments SET timed = '$yn' WHERE name LIKE 'wait/synch/mutex/live/%'" 2>&1); then
      echo "ok"
    else
      echo "error: ${out%%$'\n'*}"
    fi
    sleep 0.0$((RANDOM % 5))
  done >"$2"
}
scanner 20 "$WORK/scan1" &
s1=$!
scanner 20 "$WORK/scan2" &
s2=$!
scanner 20 "$WORK/scan3" &
s3=$!
updater 40 "$WORK/update" &
u1=$!
wait $s1 $s2 $s3 $u1
wait $truncator
cat "$WORK"/scan? "$WORK/update" >"$WORK/outcomes"
scans_ok=$(cat "$WORK"/scan? | grep -c '^ok' || true)
updates_ok=$(grep -c '^ok' "$WORK/update" || true)
changed=$(grep -c 'changed while it was read' "$WORK/outcomes" || true)
echo "scans: $scans_ok of 60 succeeded; updates: $updates_ok of 40 succeeded; \"changed while it was read\": $changed"
grep '^error' "$WORK/outcomes" | sed 's/^error: //' | sed 's/"[^"]*"/"..."/g' | sort | uniq -c | sort -rn | sed -n 1,8p

signals=$(tail -n +"$((log_lines_before + 1))" "$log" | grep -c 'terminated by signal' || true)
check "no backend was terminated by a signal ($signals in the server log)" "[ $signals -eq 0 ]"
check "every statement finished with a result or an error" "[ \$(wc -l <\"$WORK/outcomes\") -eq 100 ]"
# (a header read while cp rewrites the file from its start is not yet a region's)
unexpected=$(grep '^error' "$WORK/outcomes" | grep -v -e 'region file' -e 'region header' -e 'region array' -e 'not a perfschema region' || true)
check "every error is about the region file" "[ -z \"\$unexpected\" ]"
check "the truncations met running statements" "[ $changed -gt 0 ]"
check "the server still answers" "[ \"$(q "SELECT 1")\" = 1 ]"
check "the instrumented program is still running" "kill -0 $PROVIDER_PID"
sleep 0.2
check "a scan after the last restore works" \
  "[ \"$(q "SELECT count(*) > 0 FROM ps.events_waits_history_long")\" = t ]"

# --- FIFOs and directories are not regions
mkfifo "$WORK/fifo"
mkdir "$WORK/dir"
for path in "$WORK/fifo" "$WORK/dir"; do
  start=$(date +%s%N)
  if out=$(timeout 10 psql -X -q -At -c "CREATE SERVER bad FOREIGN DATA WRAPPER perfschema_fdw OPTIONS (region '$path')" 2>&1); then
    fail "CREATE SERVER accepted $path"
  fi
  ms=$((($(date +%s%N) - start) / 1000000))
  check "CREATE SERVER refuses $(basename "$path") in $ms ms: $out" \
    "grep -q 'is not a regular file' <<<\"\$out\" && [ $ms -lt 1000 ]"
done
q "CREATE SERVER later FOREIGN DATA WRAPPER perfschema_fdw OPTIONS (region '$WORK/later')"
q "CREATE FOREIGN TABLE later_status (variable_name text, variable_value bigint) SERVER later OPTIONS (table 'status')"
mkfifo "$WORK/later"
start=$(date +%s%N)
if out=$(timeout 10 psql -X -q -At -c "SELECT * FROM later_status" 2>&1); then
  fail "a FIFO was scanned"
fi
ms=$((($(date +%s%N) - start) / 1000000))
check "a FIFO that appears later fails the scan in $ms ms: $out" \
  "grep -q 'is not a regular file' <<<\"\$out\" && [ $ms -lt 1000 ]"

# --- waits for the setup lock honour statement_timeout and pg_cancel_backend
# (the UPDATEs below change timed from YES to NO: a real change, committed under the lock)
q "UPDATE ps.setup_instruments SET timed = 'YES' WHERE name LIKE 'wait/synch/mutex/live/%'"
build/tools/pfs_hold_setup_lock "$REGION" 30 >"$WORK/holder.out" &
holder=$!
for _ in $(seq 100); do grep -q locked "$WORK/holder.out" && break; sleep 0.05; done
start=$(date +%s%N)
if out=$(psql -X -q -At -c "SET statement_timeout = '1s'" \
  -c "UPDATE ps.setup_instruments SET timed = 'NO' WHERE name LIKE 'wait/synch/mutex/live/%'" 2>&1); then
  fail "the UPDATE committed while the setup lock was held"
fi
ms=$((($(date +%s%N) - start) / 1000000))
check "statement_timeout ends a COMMIT waiting for the setup lock in $ms ms: $out" \
  "grep -q 'statement timeout' <<<\"\$out\" && [ $ms -lt 3000 ]"
psql -X -q -At -c "SELECT 'waiting'" \
  -c "UPDATE ps.setup_instruments SET timed = 'NO' WHERE name LIKE 'wait/synch/mutex/live/%'" \
  >"$WORK/cancel.out" 2>&1 &
waiter=$!
sleep 0.5
event=$(q "SELECT wait_event_type || '/' || wait_event FROM pg_stat_activity
             WHERE query LIKE 'UPDATE ps.setup_instruments%' AND pid <> pg_backend_pid()")
expected=Extension/PerfschemaSetupLock
[ "$(q "SHOW server_version_num")" -ge 170000 ] || expected=Extension/Extension
check "the COMMIT waiting for the setup lock shows as wait event $expected ($event)" "[ \"$event\" = $expected ]"
q "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE 'UPDATE ps.setup_instruments%' AND pid <> pg_backend_pid()" >/dev/null
start=$(date +%s%N)
wait $waiter || true
ms=$((($(date +%s%N) - start) / 1000000))
check "pg_cancel_backend ends a COMMIT waiting for the setup lock in $ms ms" \
  "grep -q 'canceling statement due to user request' \"$WORK/cancel.out\" && [ $ms -lt 2000 ]"
kill "$holder" 2>/dev/null || true
wait "$holder" 2>/dev/null || true
q "UPDATE ps.setup_instruments SET timed = 'NO' WHERE name LIKE 'wait/synch/mutex/live/%'"
check "with the lock free, the UPDATE commits" \
  "[ \"$(q "SELECT DISTINCT timed FROM ps.setup_instruments WHERE name LIKE 'wait/synch/mutex/live/%'")\" = NO ]"

live_stop_provider
echo "=== fault tests passed"
