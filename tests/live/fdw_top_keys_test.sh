#!/usr/bin/env bash
# pfs_top's keys and views (issue 43), in tmux (send-keys, capture-pane), against a
# throwaway PostgreSQL:
# - tools/pfs_demo (schema ps): views 1 3 4 5 7, keys s r / p + - h, Enter on a
#   digest (its histogram) and on a thread (its history), 6 on a single region
#   (says it wants a directory), resize, colour, q;
# - tools/pfs_live with a 2-thread deadlock (schema live): view 2 marks the cycle,
#   Enter shows the lock's holders;
# - a region directory (tests/fork/pfs_prefork, schema fleet): view 6 has every
#   process alive, then not alive once they exit, and the programs' exit said;
#   a damaged file's WARNING is printed once;
# - batch mode (-b -n N --view V) against the tables' values read by psql (threads,
#   files, processes), and the server made unreachable for a while (a role that
#   cannot log in, its backend ended): the frames say so, then read again
#   (password from ~/.pgpass, as psql).
# Usage (as root): bash tests/live/fdw_top_keys_test.sh
source "$(dirname "$0")/lib.sh"

live_session pfs_top pfs_demo pfs_prefork

command -v tmux >/dev/null || fail "tmux is not installed (scripts/setup.sh installs it)"
live_workdir
mkdir -m 755 "$WORK/regions" "$WORK/data"
T=pfs_top_keys_$$
DEMO_PID= PREFORK_PID=
cleanup() {
  tmux -L "$T" kill-server 2>/dev/null || true
  for pid in $DEMO_PID; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  if [ -n "$PREFORK_PID" ]; then touch "$WORK/stop"; wait "$PREFORK_PID" 2>/dev/null || true; fi
  live_stop_provider
  rm -rf "$WORK"
}
trap cleanup EXIT

PFS_REGION="$WORK/demo.pfs" build/tools/pfs_demo --seconds=300 >"$WORK/demo.out" 2>&1 &
DEMO_PID=$!
live_start_provider --hot-threads=1 --deadlocks=2
PFS_REGION="$WORK/regions/prefork.%p.pfs" PFS_REGION_MODE=0666 PFS_INSTRUMENT='%=ON' WORKERS=2 LOCKS=200 \
  STAY_UNTIL="$WORK/stop" build/tests/pfs_prefork "$WORK/data" >"$WORK/prefork.out" 2>&1 &
PREFORK_PID=$!
for _ in $(seq 200); do
  [ -s "$WORK/demo.pfs" ] && [ "$(ls "$WORK/data" | grep -c '^worker\.')" = 2 ] && break
  sleep 0.05
done
[ -s "$WORK/demo.pfs" ] || fail "pfs_demo did not create its region: $(cat "$WORK/demo.out")"
[ "$(ls "$WORK/regions" | grep -c '\.pfs$')" = 3 ] || fail "pfs_prefork: $(cat "$WORK/prefork.out")"

psql -X -q -v ON_ERROR_STOP=1 -v demo="$WORK/demo.pfs" -v live="$REGION" -v dir="$WORK/regions" <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION perfschema_fdw;
CREATE SERVER demo FOREIGN DATA WRAPPER perfschema_fdw OPTIONS (region :'demo');
CREATE SERVER live FOREIGN DATA WRAPPER perfschema_fdw OPTIONS (region :'live');
CREATE SERVER fleet FOREIGN DATA WRAPPER perfschema_fdw OPTIONS (region_directory :'dir');
CREATE SCHEMA ps;
CREATE SCHEMA live;
CREATE SCHEMA fleet;
IMPORT FOREIGN SCHEMA performance_schema FROM SERVER demo INTO ps;
IMPORT FOREIGN SCHEMA performance_schema FROM SERVER live INTO live;
IMPORT FOREIGN SCHEMA performance_schema FROM SERVER fleet INTO fleet;
CREATE SCHEMA sys;
CREATE SCHEMA live_sys;
SELECT count(*) FROM perfschema_create_views('sys', 'ps');
SELECT count(*) FROM perfschema_create_views('live_sys', 'live');
SQL

tm() { tmux -L "$T" "$@"; }
key() { tm send-keys -t "$1" "${@:2}"; }
# Captures session $1 into $WORK/$1.txt until a line matches the ERE $2 (5 s);
# prints the screen when it never does.
wait_for() {
  for _ in $(seq 50); do
    tm capture-pane -p -t "$1" >"$WORK/$1.txt"
    grep -qE -- "$2" "$WORK/$1.txt" && return 0
    sleep 0.1
  done
  echo "--- screen of $1 (waited for: $2):" >&2
  cat "$WORK/$1.txt" >&2
  return 1
}
screen_of() { cat "$WORK/$1.txt"; }
refresh_of() { tm capture-pane -p -t "$1" | sed -n 's/.*  refresh \([0-9]*\).*/\1/p' | sed -n 1p; }
start_top() {  # session, pfs_top arguments
  local name=$1
  shift
  tm new-session -d -s "$name" -x 160 -y 50 "build/tools/pfs_top $*; echo \"pfs_top exited \$?\"; sleep 600"
}

# --- pfs_demo: views and keys
start_top demo -i 0.5
check "view 1 (default): waits of pfs_demo with a rate" \
  "wait_for demo '^wait/synch/(mutex|rwlock|cond)/demo/[^ ]+ +[0-9.]*[1-9]'"
check "colour: the header is drawn with a colour pair (capture-pane -e)" \
  "tm capture-pane -e -p -t demo | sed -n 1p | grep -q $'\\x1b\\\\[[34][0-9]'"
key demo s
check "s: the sort moves to the next column (avg)" "wait_for demo 'sorted by avg descending'"
key demo s
key demo r
check "r: the sort reversed (count, ascending)" "wait_for demo 'sorted by count ascending'"
sleep 0.6
wait_for demo 'sorted by count ascending'
awk '$1 ~ /^wait\// { print $NF }' "$WORK/demo.txt" >"$WORK/counts.txt"
check "... the rows' counts ascend ($(wc -l <"$WORK/counts.txt") rows)" \
  "[ -s \"$WORK/counts.txt\" ] && sort -n -c \"$WORK/counts.txt\""
key demo / m u t e x Enter
check "/: the filter is shown" "wait_for demo 'filter \"mutex\"'"
sleep 0.6
wait_for demo 'filter "mutex"'
check "... and every row has it" \
  "awk '\$1 ~ /^wait\\// && !/mutex/ { bad = 1 } \$1 ~ /^wait\\// { n++ } END { exit bad || n == 0 }' \"$WORK/demo.txt\""
key demo / Escape
check "/ then Esc clears the filter" "wait_for demo 'filter cleared'"
key demo p
check "p: paused" "wait_for demo 'PAUSED'"
before=$(refresh_of demo); sleep 1.2; after=$(refresh_of demo)
check "... no refresh while paused (refresh $before, 1.2 s later $after)" "[ \"$before\" = \"$after\" ]"
key demo p
sleep 1.2
check "p again: refreshes go on ($(refresh_of demo) > $after)" "[ \"$(refresh_of demo)\" -gt \"$after\" ]"
key demo +
check "+: the interval doubles" "wait_for demo 'interval 1.00 s'"
key demo -
check "-: and halves" "wait_for demo 'interval 0.50 s'"
key demo 3
check "3: statements by digest with p95 and p99" "wait_for demo '^digest text +count/s.*p95 +p99'"
check "... a statement of pfs_demo with a rate" "wait_for demo '^(INSERT|SELECT|UPDATE|DELETE)[^ ]* .* [0-9.]*[1-9]'"
key demo Enter
check "Enter on a digest: its histogram" "wait_for demo '^low_ps +high_ps +count +quantile'"
awk '$1 ~ /^[0-9]+$/ && NF == 4' "$WORK/demo.txt" >"$WORK/histogram.txt"
check "... with $(wc -l <"$WORK/histogram.txt") buckets" "[ -s \"$WORK/histogram.txt\" ]"
key demo x
check "any key closes the detail" "wait_for demo 'Statements by digest'"
key demo 5
check "5: threads with their statement, stage and wait" "wait_for demo '^thread +name +statement +stage +wait'"
check "... pfs_demo's threads" "wait_for demo '^[0-9]+ +[^ ]*demo'"
# (a thread that runs requests: the main thread's history is empty)
key demo / I N S E R T Enter
wait_for demo 'filter "INSERT"'
key demo Enter
check "Enter on a thread: its history" "wait_for demo '^event_id +kind +event +time_ps'"
check "... its statements, stages and waits" \
  "grep -q ' statement ' \"$WORK/demo.txt\" && grep -q ' stage ' \"$WORK/demo.txt\" && grep -q ' wait ' \"$WORK/demo.txt\""
key demo x
key demo / Escape
key demo 4
check "4: files by instance" "wait_for demo '^file +reads/s +read B/s'"
key demo 7
check "7: memory by event name, the agent's own" "wait_for demo '^memory/performance_schema/'"
key demo 6
check "6 on one region: says it reads a region directory's tables" \
  "wait_for demo 'view 6 reads the tables of a region_directory server'"
key demo 1
key demo h
check "h: the help" "wait_for demo 'pfs_top keys'"
key demo x
check "any key closes it" "wait_for demo 'Waits by event name'"
tm resize-window -t demo -x 100 -y 30
check "resize: redrawn at the new size (the last line is line 30)" \
  "wait_for demo '\\(h: help\\)' && [ \"\$(grep -n 'h: help' \"$WORK/demo.txt\" | cut -d: -f1)\" = 30 ]"
key demo q
check "q: quits with status 0" "wait_for demo 'pfs_top exited 0'"

# --- the deadlocked pfs_live: the cycle, the holders
start_top live -s live -S live_sys -i 0.5 --view 2
check "2: lock waits of the deadlock, marked as a cycle (*)" \
  "wait_for live 'wait/synch/mutex/live/deadlock2_lock.* \\*\$'"
check "... both threads of the cycle" "[ \$(grep -c 'deadlock2_lock.* \\*\$' \"$WORK/live.txt\") -ge 2 ]"
check "... drawn in red" "grep -q $'\\x1b\\\\[31m' <<<\"\$(tm capture-pane -e -p -t live | grep 'deadlock2_lock')\""
key live Enter
check "Enter on a lock wait: the lock's holders" "wait_for live '^holder +thread +took_it_at +held_ps +waiters'"
holders=$(q "SELECT string_agg(DISTINCT blocking_thread_id::text, ' ' ORDER BY blocking_thread_id::text) FROM live_sys.lock_waits
              WHERE locked_lock = 'wait/synch/mutex/live/deadlock2_lock'")
shown=$(awk '$1 ~ /^[0-9]+$/ { print $1 }' "$WORK/live.txt" | sort | tr '\n' ' ' | sed 's/ $//')
check "... the holders are lock_waits' ($holders), shown: $shown" "[ \"$shown\" = \"$holders\" ]"
key live q

# --- the region directory: processes, alive, then exited
start_top fleet -s fleet -i 0.5 --view processes
pids=$(q "SELECT string_agg(process_id::text, ' ' ORDER BY process_id) FROM fleet.status WHERE variable_name = 'provider_alive'")
check "6: a row per process of the directory, alive ($pids)" "wait_for fleet '^$PREFORK_PID +pfs_prefork +yes'"
check "... every process" "[ \"\$(awk '\$2 == \"pfs_prefork\" && \$3 == \"yes\" { print \$1 }' \"$WORK/fleet.txt\" | sort -n | tr '\\n' ' ' | sed 's/ \$//')\" = \"$pids\" ]"
key fleet Enter
check "Enter on a process: its top waits" "wait_for fleet '^event_name +count_star +time_ps'"
key fleet x
touch "$WORK/stop"
wait "$PREFORK_PID" 2>/dev/null || true
PREFORK_PID=
check "after the processes exit: not alive" "wait_for fleet '^$PREFORK_PID[0-9]* *pfs_prefork +no \\(exited\\)' || wait_for fleet 'no \\(exited\\)'"
check "... and said: the programs (pids ...) have exited (seen at the time)" "wait_for fleet 'the programs \\(pids [0-9, ]+\\) have exited \\(seen at [0-9:]{8}\\)'"
key fleet q

# --- batch mode against the tables
build/tools/pfs_top -b -n 1 -i 0.2 -s fleet -N 100 --view processes >"$WORK/processes.txt"
cat "$WORK/processes.txt"
expected=$(q "SELECT string_agg(s.process_id || ' ' || coalesce(w.n, 0), ',' ORDER BY s.process_id) FROM fleet.status s
                LEFT JOIN (SELECT process_id, sum(count_star) AS n FROM fleet.events_waits_summary_global_by_event_name GROUP BY 1) w
                USING (process_id) WHERE s.variable_name = 'provider_alive'")
printed=$(awk '$2 == "pfs_prefork" { print $1 " " $NF }' "$WORK/processes.txt" | sort -n | paste -sd,)
check "batch view 6: each process's waits are the table's ($expected)" "[ \"$printed\" = \"$expected\" ]"
build/tools/pfs_top -b -n 1 -i 0.2 -s fleet -N 100 --view files >"$WORK/files.txt"
expected=$(q "SELECT string_agg(file_name || ' ' || sum_number_of_bytes_write, ',' ORDER BY file_name) FROM fleet.file_summary_by_instance
               WHERE file_name LIKE '%/worker.%'")
printed=$(awk '$1 ~ /\/worker\./ { print $1 " " $NF }' "$WORK/files.txt" | sort | paste -sd,)
check "batch view 4: the workers' files and their bytes written ($expected)" "[ -n \"$expected\" ] && [ \"$printed\" = \"$expected\" ]"
build/tools/pfs_top -b -n 1 -i 0.2 -s live -S live_sys -N 100 --view threads >"$WORK/threads.txt"
expected=$(q "SELECT string_agg(thread_id || ' ' || name, ',' ORDER BY thread_id) FROM live.threads")
printed=$(awk '$1 ~ /^[0-9]+$/ { print $1 " " $2 }' "$WORK/threads.txt" | sort -n | paste -sd,)
check "batch view 5: pfs_live's threads ($(echo "$expected" | tr ',' '\n' | wc -l))" "[ \"$printed\" = \"$expected\" ]"

# --- a damaged region in the directory: the server's WARNING printed once
head -c 8192 /dev/urandom >"$WORK/regions/garbage.pfs"
build/tools/pfs_top -b -n 3 -i 0.2 -s fleet --view processes >"$WORK/warning.txt"
grep warning "$WORK/warning.txt" || true
check "a damaged region: its WARNING is printed once in 4 reads" \
  "[ \$(grep -c '^warning (shown once): .*skipping region file' \"$WORK/warning.txt\") = 1 ]"
rm "$WORK/regions/garbage.pfs"

# --- the server unreachable for a while: a role that cannot log in, its backend ended
psql -X -q -v ON_ERROR_STOP=1 <<'SQL'
CREATE ROLE top_reader LOGIN PASSWORD 'top secret';
GRANT USAGE ON SCHEMA live TO top_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA live TO top_reader;
SQL
printf '*:*:*:top_reader:top secret\n' >"$WORK/.pgpass"
chmod 600 "$WORK/.pgpass"
env -u PGPASSWORD HOME="$WORK" build/tools/pfs_top -b -n 12 -i 0.5 -U top_reader -s live >"$WORK/unreachable.txt" 2>&1 &
top_pid=$!
sleep 1.2
q "ALTER ROLE top_reader NOLOGIN"
q "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = 'top_reader'" >/dev/null
sleep 2
q "ALTER ROLE top_reader LOGIN"
wait "$top_pid" || fail "pfs_top -U top_reader: $(cat "$WORK/unreachable.txt")"
grep -E '^(the server|pfs_top -)' "$WORK/unreachable.txt"
check "~/.pgpass gives the password (a frame read the table before)" \
  "grep -q '^wait/synch/mutex/live/hot_lock' <<<\"\$(sed -n '1,/the server is unreachable/p' \"$WORK/unreachable.txt\")\""
check "the frames say the server is unreachable, with the next try" \
  "grep -qE '^the server is unreachable: .*not permitted to log in.* \\(retrying in [0-9]+ s\\)' \"$WORK/unreachable.txt\""
check "... then read again once it can log in" \
  "grep -q '^wait/synch/mutex/live/hot_lock' <<<\"\$(sed -n '/the server is unreachable/,\$p' \"$WORK/unreachable.txt\")\""

# --- the screen started while no server answers: it says so and retries
start_top nobody -h 127.0.0.1 -p "$(free_port)"
check "started without a server: the screen says it is unreachable and when it retries" \
  "wait_for nobody '^the server is unreachable: .*\\(retrying in [0-9]+ s\\)'"
key nobody q
check "... and q quits" "wait_for nobody 'pfs_top exited 0'"

echo "=== fdw_top_keys_test: all checks passed"
