#!/usr/bin/env bash
# pfs_top (tools/top/) against a throwaway PostgreSQL: tools/pfs_demo (statements,
# stages and contended waits) imported into schema ps, tools/pfs_live with a
# 2-thread deadlock (--deadlocks=2) into schema live. pfs_top runs in a tmux pane
# (connection from libpq's environment, as pg_virtualenv sets it) and the screen
# (tmux capture-pane) must show waits of pfs_demo with a rate (view 1), one frame
# redrawn in place; then -b (batch) with psql's -h -p -U -d on the deadlocked
# program must print plain frames with its waits (view 1) and its lock waits
# (view 2). tests/live/fdw_top_keys_test.sh checks every key and view.
# The timeline from SQL (scripts/timeline.sql) of a short pfs_demo run is checked
# here too: its statements, stages and waits nest by time, and its statements keep
# the program's schema.
# Usage (as root): bash tests/live/fdw_top_test.sh
source "$(dirname "$0")/lib.sh"

live_session pfs_top pfs_demo

command -v tmux >/dev/null || fail "tmux is not installed (scripts/setup.sh installs it)"
live_workdir
TMUX_SOCKET=pfs_top_test_$$
DEMO_PID=
cleanup() {
  tmux -L "$TMUX_SOCKET" kill-server 2>/dev/null || true
  if [ -n "$DEMO_PID" ]; then
    kill "$DEMO_PID" 2>/dev/null || true
    wait "$DEMO_PID" 2>/dev/null || true
  fi
  live_stop_provider
  rm -rf "$WORK"
}
trap cleanup EXIT

PFS_REGION="$WORK/demo.pfs" build/tools/pfs_demo --seconds=300 >"$WORK/demo.out" 2>&1 &
DEMO_PID=$!
live_start_provider --hot-threads=1 --deadlocks=2
for _ in $(seq 100); do [ -s "$WORK/demo.pfs" ] && break; sleep 0.05; done
[ -s "$WORK/demo.pfs" ] || fail "pfs_demo did not create its region: $(cat "$WORK/demo.out")"

psql -X -q -v ON_ERROR_STOP=1 -v demo="$WORK/demo.pfs" -v live="$REGION" <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION perfschema_fdw;
CREATE SERVER demo FOREIGN DATA WRAPPER perfschema_fdw OPTIONS (region :'demo');
CREATE SERVER live FOREIGN DATA WRAPPER perfschema_fdw OPTIONS (region :'live');
CREATE SCHEMA ps;
CREATE SCHEMA live;
IMPORT FOREIGN SCHEMA performance_schema FROM SERVER demo INTO ps;
IMPORT FOREIGN SCHEMA performance_schema FROM SERVER live INTO live;
CREATE SCHEMA sys;
CREATE SCHEMA live_sys;
SELECT count(*) FROM perfschema_create_views('sys', 'ps');
SELECT count(*) FROM perfschema_create_views('live_sys', 'live');
SQL

# rows of the waits view whose count/s is above 0 and whose name matches $2:
# "name  count/s  time/s unit  avg unit  count"
rated() { awk -v pattern="$2" '$1 ~ pattern && $2 + 0 > 0' "$1"; }

# --- in tmux, as people run it: the defaults (schema ps, sys) and libpq's environment
tmux -L "$TMUX_SOCKET" new-session -d -x 160 -y 60 \
  "build/tools/pfs_top -n 3 -N 8; echo \"pfs_top exited \$?\"; sleep 600"
screen="$WORK/screen.txt"
for _ in $(seq 100); do
  tmux -L "$TMUX_SOCKET" capture-pane -p >"$screen"
  grep -q "refresh 2" "$screen" && break
  sleep 0.1
done
echo "--- the screen at refresh 2:"
cat "$screen"
check "pfs_top draws its screen in tmux (refresh 2 reached)" "grep -q 'refresh 2' \"$screen\""
rated "$screen" '^wait/synch/(mutex|rwlock|cond)/demo/' >"$WORK/waits.txt"
check "the screen shows $(wc -l <"$WORK/waits.txt") waits of pfs_demo with a rate (count/s > 0): $(head -1 "$WORK/waits.txt" | tr -s ' ')" \
  "[ -s \"$WORK/waits.txt\" ]"
check "one frame, redrawn in place (one header on the screen)" "[ \$(grep -c '^pfs_top - ' \"$screen\") -eq 1 ]"
for _ in $(seq 100); do
  tmux -L "$TMUX_SOCKET" capture-pane -p >"$screen"
  grep -q "pfs_top exited" "$screen" && break
  sleep 0.1
done
# (the screen is ncurses' alternate screen: gone once pfs_top ends)
check "-n 3 ends pfs_top, with status 0" "grep -q 'pfs_top exited 0' \"$screen\""

# --- the SQL timeline (scripts/timeline.sql) of a second, 1-second pfs_demo run
# whose histories hold all its statements, stages and waits (the busiest
# instruments off): they nest by time, and headless chromium loads the JSON.
# PFS_WAIT_TIMER=NANOSECOND: the timer of stages and statements, so that nesting
# holds to the picosecond (the CYCLE and NANOSECOND baselines agree only to about
# a microsecond: agent/region/region.cpp reads them back to back).
PFS_WAIT_TIMER=NANOSECOND PFS_REGION="$WORK/timeline.pfs" PFS_INSTRUMENT='%=ON,statement/demo/lookup=OFF,wait/synch/rwlock/demo/%=OFF,wait/synch/mutex/demo/stats_lock=OFF' \
  PFS_STATEMENTS_HISTORY_LONG_SIZE=50000 PFS_STAGES_HISTORY_LONG_SIZE=200000 PFS_WAITS_HISTORY_LONG_SIZE=200000 \
  build/tools/pfs_demo --seconds=1 >"$WORK/timeline_demo.out" 2>&1 || fail "pfs_demo: $(cat "$WORK/timeline_demo.out")"
psql -X -q -v ON_ERROR_STOP=1 -v region="$WORK/timeline.pfs" <<'SQL'
CREATE SERVER timeline FOREIGN DATA WRAPPER perfschema_fdw OPTIONS (region :'region');
CREATE SCHEMA timeline;
IMPORT FOREIGN SCHEMA performance_schema FROM SERVER timeline INTO timeline;
SQL
psql -X -q -At -v ON_ERROR_STOP=1 -v schema=timeline -f scripts/timeline.sql -o "$WORK/demo.json"
# (pfs_demo's statements run in schema demo: the timeline must say so)
python3 tests/live/timeline_json.py "$WORK/demo.json" --nesting --schema demo
# (PFS_SKIP_BROWSER=1: not here, as in fdw_trace_test.sh)
if [ -n "${PFS_SKIP_BROWSER:-}" ]; then
  echo "skipped: headless chromium (PFS_SKIP_BROWSER)"
else
  verdict=$(bash tests/live/timeline_browser.sh "$WORK/demo.json") || fail "chromium: $verdict"
  echo "ok: headless chromium loads pfs_demo's timeline: $verdict"
fi

# --- batch mode, psql's options, another schema: the deadlocked pfs_live
build/tools/pfs_top -b -n 2 -i 0.5 -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" -d "${PGDATABASE:-postgres}" \
  -s live -S live_sys >"$WORK/batch.txt"
build/tools/pfs_top -b -n 2 -i 0.5 -s live -S live_sys --view locks >>"$WORK/batch.txt"
echo "--- pfs_top -b -n 2 -s live -S live_sys:"
cat "$WORK/batch.txt"
check "-b prints 2 plain frames of each view (no escape codes)" \
  "[ \$(grep -c '^pfs_top - ' \"$WORK/batch.txt\") -eq 4 ] && ! grep -q \$'\\x1b' \"$WORK/batch.txt\""
check "the hot lock of pfs_live has a rate" "[ -n \"\$(rated \"$WORK/batch.txt\" '^wait/synch/mutex/live/hot_lock\$')\" ]"
check "lock waits: both threads of the deadlock wait for a deadlock2_lock held by the other" \
  "[ \$(grep -c 'wait/synch/mutex/live/deadlock2_lock' \"$WORK/batch.txt\") -ge 4 ]"

if build/tools/pfs_top -b -n 1 -s no_such_schema >"$WORK/bad.out" 2>&1; then
  fail "pfs_top accepted a schema without the tables"
fi
check "a schema without the tables is an error: $(grep -m1 "no_such_schema.*does not exist" "$WORK/bad.out")" "grep -q 'no_such_schema' \"$WORK/bad.out\""

# --- without the sys views: the lock waits section says which call makes them
q "CREATE SCHEMA no_views"
# (status 1: no read of the view succeeded)
if build/tools/pfs_top -b -n 1 -i 0.2 -S no_views -v 2 >"$WORK/no_views.txt"; then
  fail "pfs_top -v 2 without the views exited 0"
fi
echo "--- pfs_top -b -n 1 -S no_views -v 2:"
cat "$WORK/no_views.txt"
check "without sys views: run SELECT perfschema_create_views('no_views', 'ps')" \
  "grep -qF \"run SELECT perfschema_create_views('no_views', 'ps')\" \"$WORK/no_views.txt\""
check "without sys views: no raw SQL error (LINE 1:)" "! grep -q 'LINE 1' \"$WORK/no_views.txt\""

# --- a program that has exited (the timeline's pfs_demo run): said, with its pid
exited_pid=$(q "SELECT variable_value FROM timeline.status WHERE variable_name = 'pid'")
build/tools/pfs_top -b -n 1 -i 0.2 -s timeline >"$WORK/exited.txt"
echo "--- pfs_top -b -n 1 -s timeline (pfs_demo has exited):"
cat "$WORK/exited.txt"
check "an exited program is said: the program (pid $exited_pid) has exited" \
  "grep -qF 'the program (pid $exited_pid) has exited' \"$WORK/exited.txt\""
check "the live program is not said to have exited" "! grep -q 'has exited' \"$WORK/batch.txt\""

echo "=== fdw_top_test: all checks passed"
