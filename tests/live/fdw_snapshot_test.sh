#!/usr/bin/env bash
# Snapshots on a real pg_cron schedule: a throwaway PostgreSQL with pg_cron
# preloaded (jobs in background workers, so no password is needed), a live
# instrumented process, one snapshot taken by hand and a pg_cron job that takes
# the next at the start of a minute (pg_cron 1.4 schedules by the minute: this
# test waits up to 70 s). Then waits_delta shows the program's waits per second
# over that interval, and the folded stacks of its waits turn into an SVG.
# Usage (as root): bash tests/live/fdw_snapshot_test.sh
source "$(dirname "$0")/lib.sh"

live_session pfs_flamegraph -- -o shared_preload_libraries=pg_cron -o cron.database_name=postgres \
  -o cron.use_background_workers=on

live_workdir
live_start_provider
live_import
q "CREATE EXTENSION pg_cron" >/dev/null

first=$(q "SELECT perfschema_snapshot('ps')")
check "a snapshot by hand ($first)" "[ -n '$first' ]"
q "SELECT cron.schedule('perfschema', '* * * * *', \$\$SELECT perfschema_snapshot('ps')\$\$)" >/dev/null
for _ in $(seq 70); do
  n=$(q "SELECT count(*) FROM perfschema_history.snapshots")
  [ "$n" -ge 2 ] && break
  sleep 1
done
runs=$(q "SELECT count(*) || ' ' || coalesce(string_agg(DISTINCT status, ','), '') FROM cron.job_run_details")
check "pg_cron took a snapshot ($n snapshots; job runs and status: $runs)" "[ $n -ge 2 ]"
q "SELECT cron.unschedule('perfschema')" >/dev/null

# The interval between the two: the program's waits, per second, none negative.
read -r intervals waits rate <<<"$(q "SELECT count(DISTINCT snapshot_id), sum(count_star), round(sum(waits_per_second))
                                     FROM perfschema_history.waits_delta" | tr '|' ' ')"
check "waits_delta has the interval ($intervals)" "[ $intervals -eq 1 ]"
check "the program waited in it ($waits waits, $rate per second)" "[ $waits -gt 0 ] && [ $rate -gt 0 ]"
negative=$(q "SELECT count(*) FROM perfschema_history.waits_delta WHERE count_star < 0 OR sum_timer_wait < 0")
check "no negative delta ($negative)" "[ $negative -eq 0 ]"
# (pfs_live does no file io: sql/snapshots.sql checks file_io_delta's arithmetic.)
files=$(q "SELECT count(*) FROM perfschema_history.file_io_delta WHERE count_read < 0 OR bytes_read < 0")
check "file_io_delta has no negative delta ($files)" "[ $files -eq 0 ]"

# Retention drops nothing recent, everything with a zero interval.
kept=$(q "SELECT perfschema_snapshot_retention('1 hour')")
check "retention keeps recent snapshots ($kept dropped)" "[ $kept -eq 0 ]"

# A flame graph of the waits kept in history_long.
q "SELECT stack || ' ' || picoseconds FROM perfschema_folded_waits('ps')" >"$WORK/folded.txt"
stacks=$(wc -l <"$WORK/folded.txt")
check "folded stacks of the program's waits ($stacks)" "[ $stacks -gt 0 ]"
total=$(q "SELECT sum(timer_wait) FROM ps.events_waits_history_long WHERE timer_wait IS NOT NULL")
folded_total=$(awk '{ s += $NF } END { printf "%.0f", s }' "$WORK/folded.txt")
echo "history_long waited $total ps; the folded stacks sum to $folded_total ps (a scan later)"
check "every stack starts with a thread class" "! grep -qv '^thread/' '$WORK/folded.txt'"
build/tools/pfs_flamegraph --title="pfs_live waits" <"$WORK/folded.txt" >"$WORK/waits.svg"
boxes=$(grep -c '<rect' "$WORK/waits.svg")
check "the SVG has a box per frame ($boxes)" "[ $boxes -gt $stacks ]"
if command -v xmllint >/dev/null; then
  check "the SVG is well-formed XML" "xmllint --noout '$WORK/waits.svg'"
fi

live_stop_provider
echo "=== fdw_snapshot_test: all checks passed"
