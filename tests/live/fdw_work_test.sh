#!/usr/bin/env bash
# Units of work end to end: tools/pfs_demo (a producer, two consumers and two
# readers whose requests are statements with stages, the consumers' inside
# transactions) runs against a throwaway PostgreSQL; after it exits, SQL checks
# that every wait kept in events_waits_history_long nests in a stage or a
# statement that the stage and statement tables hold, every stage in a statement
# that exists, and that the statement summaries (by event name and by digest)
# and the stage and transaction summaries equal the counts the program printed.
# The long histories are sized so that the statements and stages of the waits
# still kept are kept too.
# Usage (as root): bash tests/live/fdw_work_test.sh    (WORK_SECONDS, default 2)
source "$(dirname "$0")/lib.sh"

live_session pfs_demo pfs_flamegraph

live_workdir
PFS_WAITS_HISTORY_LONG_SIZE=2000 PFS_STAGES_HISTORY_LONG_SIZE=60000 PFS_STATEMENTS_HISTORY_LONG_SIZE=50000 \
  PFS_TRANSACTIONS_HISTORY_LONG_SIZE=20000 PFS_MAX_SQL_TEXT_LENGTH=64 PFS_REGION="$REGION" \
  build/tools/pfs_demo --seconds="${WORK_SECONDS:-2}" >"$WORK/demo.out"
cat "$WORK/demo.out"
# pfs_demo: produced P, consumed C, cache hits H, misses M
read -r produced consumed hits misses < <(sed -n 's/.*produced \([0-9]*\), consumed \([0-9]*\), cache hits \([0-9]*\), misses \([0-9]*\).*/\1 \2 \3 \4/p' "$WORK/demo.out")
[ -n "${misses:-}" ] || fail "pfs_demo printed no counts"
live_import

# Nesting: waits in stages or statements, stages in statements, all present.
# A wait counts when its stage (statement) is no older than the oldest stage
# (statement) its thread still has: history_long keeps the latest waits to within
# one batch of slots per thread, so a thread that exits leaves slots of an earlier
# round behind, whose stages may be gone from the (much busier) stage table.
waits=$(q "SELECT count(*) FROM ps.events_waits_history_long WHERE nesting_event_type IN ('STAGE', 'STATEMENT')")
orphans="WITH kept_stage AS (SELECT thread_id, min(event_id) AS oldest FROM ps.events_stages_history_long GROUP BY thread_id),
  kept_statement AS (SELECT thread_id, min(event_id) AS oldest FROM ps.events_statements_history_long GROUP BY thread_id)
  SELECT w.thread_id, w.event_id, w.event_name, w.nesting_event_type, w.nesting_event_id, w.timer_start
    FROM ps.events_waits_history_long w
    LEFT JOIN kept_stage ks ON ks.thread_id = w.thread_id
    LEFT JOIN kept_statement kq ON kq.thread_id = w.thread_id
   WHERE (w.nesting_event_type = 'STAGE' AND w.nesting_event_id >= coalesce(ks.oldest, 0)
          AND NOT EXISTS (SELECT 1 FROM ps.events_stages_history_long s
                           WHERE s.thread_id = w.thread_id AND s.event_id = w.nesting_event_id))
      OR (w.nesting_event_type = 'STATEMENT' AND w.nesting_event_id >= coalesce(kq.oldest, 0)
          AND NOT EXISTS (SELECT 1 FROM ps.events_statements_history_long s
                           WHERE s.thread_id = w.thread_id AND s.event_id = w.nesting_event_id))"
orphan_waits=$(q "SELECT count(*) FROM ($orphans) o")
[ "$orphan_waits" -eq 0 ] || psql -X -c "$orphans" || true
check "$waits waits nest in stages or statements" "[ $waits -gt 100 ]"
check "every one of them nests in a stage or statement the tables hold ($orphan_waits missing)" "[ $orphan_waits -eq 0 ]"
inside=$(q "SELECT count(*) FROM ps.events_waits_history_long w
  JOIN ps.events_stages_history_long s ON s.thread_id = w.thread_id AND s.event_id = w.nesting_event_id
  WHERE w.nesting_event_type = 'STAGE' AND NOT (w.event_id > s.event_id AND w.event_id <= s.end_event_id)")
check "a wait's EVENT_ID lies between its stage's EVENT_ID and END_EVENT_ID ($inside outside)" "[ $inside -eq 0 ]"
# (The oldest statement each thread still has, computed once: a subquery per stage
# would read history_long once per stage, tens of thousands of times.)
orphan_stages=$(q "WITH kept AS (SELECT thread_id, min(event_id) AS oldest
                                   FROM ps.events_statements_history_long GROUP BY thread_id)
  SELECT count(*) FROM ps.events_stages_history_long g JOIN kept k ON k.thread_id = g.thread_id
  WHERE g.nesting_event_type = 'STATEMENT' AND g.nesting_event_id >= k.oldest
    AND NOT EXISTS (SELECT 1 FROM ps.events_statements_history_long s
                     WHERE s.thread_id = g.thread_id AND s.event_id = g.nesting_event_id)")
check "every stage nests in a statement the table holds ($orphan_stages missing)" "[ $orphan_stages -eq 0 ]"
trx_nest=$(q "SELECT count(*) FROM ps.events_transactions_history_long t
  WHERE t.nesting_event_type IS DISTINCT FROM 'STATEMENT'")
check "transactions nest in the statement that began them ($trx_nest do not)" "[ $trx_nest -eq 0 ]"

# Summaries equal what the program counted.
count_of() { q "SELECT count_star FROM ps.events_statements_summary_global_by_event_name WHERE event_name = '$1'"; }
check "statement/demo/produce = $produced produced" "[ $(count_of statement/demo/produce) -eq $produced ]"
# each consumer's last statement found the queue closed
check "statement/demo/consume = $consumed consumed + 2" "[ $(count_of statement/demo/consume) -eq $((consumed + 2)) ]"
check "statement/demo/lookup = $hits hits + $misses misses" "[ $(count_of statement/demo/lookup) -eq $((hits + misses)) ]"
digest_total=$(q "SELECT sum(count_star) FROM ps.events_statements_summary_by_digest")
check "the digests count every statement with a text ($digest_total)" "[ $digest_total -eq $((produced + consumed + hits + misses)) ]"
digests=$(q "SELECT count(*) FROM ps.events_statements_summary_by_digest")
check "three kinds of statement text, three digests ($digests)" "[ $digests -eq 3 ]"
warnings=$(q "SELECT sum(sum_warnings) FROM ps.events_statements_summary_by_digest")
check "a warning per cache miss ($warnings)" "[ $warnings -eq $misses ]"
trx=$(q "SELECT count_star FROM ps.events_transactions_summary_global_by_event_name")
check "a transaction per consumed item ($trx)" "[ $trx -eq $consumed ]"
storing=$(q "SELECT count_star FROM ps.events_stages_summary_global_by_event_name WHERE event_name = 'stage/demo/storing'")
check "a storing stage per consumed item ($storing)" "[ $storing -eq $consumed ]"
hist=$(q "SELECT sum(count_bucket) FROM ps.events_statements_histogram_global")
check "the statement histogram holds every statement ($hist)" "[ $hist -eq $((produced + consumed + 2 + hits + misses)) ]"
lock_wait=$(q "SELECT count_star FROM ps.events_waits_summary_global_by_event_name WHERE event_name = 'wait/synch/mutex/demo/queue_lock'")
lock_hist=$(q "SELECT sum(count_bucket) FROM ps.events_waits_histogram_global_by_event_name WHERE event_name = 'wait/synch/mutex/demo/queue_lock'")
check "the queue lock's histogram holds its $lock_wait waits ($lock_hist)" "[ $lock_hist -eq $lock_wait ]"

# The views over them.
q "CREATE SCHEMA sys" && q "SELECT count(*) FROM perfschema_create_views('sys', 'ps')" >/dev/null
analysis=$(q "SELECT count(*) FROM sys.statement_analysis")
check "sys.statement_analysis shows the three digests ($analysis)" "[ $analysis -eq 3 ]"
by_statement=$(q "SELECT count(DISTINCT statement) FROM sys.x\$waits_by_statement")
# Which kinds of request the kept waits nest in depends on which threads ran last
# (2000 waits are kept): the same question asked of the tables another way.
nested_kinds=$(q "WITH w AS (SELECT thread_id, nesting_event_id, nesting_event_type FROM ps.events_waits_history_long
                            UNION SELECT thread_id, nesting_event_id, nesting_event_type FROM ps.events_waits_history),
                     g AS (SELECT thread_id, event_id, nesting_event_id FROM ps.events_stages_history_long
                            UNION SELECT thread_id, event_id, nesting_event_id FROM ps.events_stages_history),
                     s AS (SELECT thread_id, event_id, event_name FROM ps.events_statements_history_long
                            UNION SELECT thread_id, event_id, event_name FROM ps.events_statements_history
                            UNION SELECT thread_id, event_id, event_name FROM ps.events_statements_current)
                SELECT count(DISTINCT s.event_name) FROM s
                 WHERE EXISTS (SELECT 1 FROM w WHERE w.nesting_event_type = 'STATEMENT'
                                  AND w.thread_id = s.thread_id AND w.nesting_event_id = s.event_id)
                    OR EXISTS (SELECT 1 FROM w JOIN g ON w.nesting_event_type = 'STAGE'
                                  AND g.thread_id = w.thread_id AND g.event_id = w.nesting_event_id
                                WHERE g.thread_id = s.thread_id AND g.nesting_event_id = s.event_id)")
check "waits by statement name every kind of request the kept waits nest in ($by_statement of $nested_kinds)" \
  "[ $nested_kinds -ge 1 ] && [ $by_statement -eq $nested_kinds ]"
# Folded stacks for a flame graph: thread class; statement; stage; wait; source,
# adding up, with the waits left out (their stage or statement is gone from the
# histories: the notice says how long they took), to the waiting time history_long
# holds (the program has exited).
psql -X -q -At -v ON_ERROR_STOP=1 -c "SELECT stack || ' ' || picoseconds FROM perfschema_folded_waits('ps')" \
  >"$WORK/folded.txt" 2>"$WORK/folded.notice"
total=$(q "SELECT sum(timer_wait) FROM ps.events_waits_history_long")
folded=$(awk '{ s += $NF } END { printf "%.0f", s }' "$WORK/folded.txt")
left_out=$(sed -n 's/.*the waits left out took \([0-9]*\) picoseconds.*/\1/p' "$WORK/folded.notice")
echo "folded stacks: $folded ps; left out: ${left_out:-0} ps ($(head -1 "$WORK/folded.notice"))"
check "the folded stacks and the waits left out add up to history_long's waiting time ($folded + ${left_out:-0} ps = $total ps)" \
  "[ \"\$(python3 -c 'import sys; print(int(sys.argv[1]) + int(sys.argv[2]))' '$folded' '${left_out:-0}')\" = '$total' ]"
# (the program has exited: its threads' classes went with them, thread/unknown)
check "a consumer's queue waits stack up under its statement and stage" \
  "grep -q '^thread/[a-z]*;statement/demo/consume;stage/demo/waiting for work;wait/synch/' '$WORK/folded.txt'"
build/tools/pfs_flamegraph --title="pfs_demo waits" <"$WORK/folded.txt" >"$WORK/waits.svg"
check "the flame graph has a box per frame ($(grep -c '<rect' "$WORK/waits.svg") boxes)" \
  "[ $(grep -c '<rect' "$WORK/waits.svg") -gt $(wc -l <"$WORK/folded.txt") ]"
# TRUNCATE from SQL, as MySQL allows it on these tables.
q "TRUNCATE ps.events_statements_history_long, ps.events_stages_history_long"
check "TRUNCATE empties the long histories" \
  "[ $(q "SELECT count(*) FROM ps.events_statements_history_long") -eq 0 ] && [ $(q "SELECT count(*) FROM ps.events_stages_history_long") -eq 0 ]"
q "TRUNCATE ps.events_statements_summary_by_digest"
check "TRUNCATE empties the digest table" "[ $(q "SELECT count(*) FROM ps.events_statements_summary_by_digest") -eq 0 ]"
q "TRUNCATE ps.events_statements_histogram_global, ps.events_waits_histogram_global_by_event_name"
check "TRUNCATE zeroes the histograms" \
  "[ $(q "SELECT sum(count_bucket) FROM ps.events_statements_histogram_global") -eq 0 ] && [ $(q "SELECT sum(count_bucket) FROM ps.events_waits_histogram_global_by_event_name") -eq 0 ]"
q "TRUNCATE ps.events_statements_summary_global_by_event_name"
check "TRUNCATE zeroes the statement summaries" \
  "[ $(q "SELECT sum(count_star) FROM ps.events_statements_summary_global_by_event_name") -eq 0 ]"
if q "DELETE FROM ps.events_statements_history" 2>"$WORK/delete.err"; then fail "DELETE from an event table was accepted"; fi
check "other writes are refused: $(head -1 "$WORK/delete.err")" "grep -q 'does not allow' \"$WORK/delete.err\""
echo "=== units of work: all checks passed"
