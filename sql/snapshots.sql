--
-- Snapshots of the summary tables and the deltas between them: one consistent
-- read per table into perfschema_history; deltas never negative, a counter that
-- went down (TRUNCATE) or a region of another process starts a new series.
--
\! build/tools/pfs_fixture --mode=0666 /tmp/perfschema_fdw_regress/snap.region
CREATE SERVER pfs_snap FOREIGN DATA WRAPPER perfschema_fdw
  OPTIONS (region '/tmp/perfschema_fdw_regress/snap.region');
CREATE SCHEMA snap;
IMPORT FOREIGN SCHEMA performance_schema FROM SERVER pfs_snap INTO snap;

SELECT perfschema_snapshot('snap') AS first_id \gset
SELECT perfschema_snapshot('snap') - :first_id AS second_minus_first;
SELECT table_name FROM information_schema.tables
 WHERE table_schema = 'perfschema_history' ORDER BY table_name;
-- Every row of the foreign table, once per snapshot.
SELECT (SELECT count(*) FROM perfschema_history.events_waits_summary_global_by_event_name) =
       2 * (SELECT count(*) FROM snap.events_waits_summary_global_by_event_name) AS both_copied;
-- Nothing moved between the two (the fixture's program has exited).
SELECT event_name, count_star, sum_timer_wait, waits_per_second, new_series
  FROM perfschema_history.waits_delta ORDER BY event_name;
SELECT event_name, count_read, bytes_read, count_write, bytes_write, new_series
  FROM perfschema_history.file_io_delta;

-- The delta arithmetic, on history rows edited to tell a story: the queue lock
-- counts 10 more waits in the third snapshot, then a TRUNCATE sets it back to 2,
-- then the program restarts (another creation time) with 7.
SELECT perfschema_snapshot('snap') AS third \gset
SELECT perfschema_snapshot('snap') AS fourth \gset
SELECT perfschema_snapshot('snap') AS fifth \gset
UPDATE perfschema_history.events_waits_summary_global_by_event_name
   SET count_star = count_star + 10, sum_timer_wait = sum_timer_wait + 5000000
 WHERE snapshot_id = :third AND event_name = 'wait/synch/mutex/app/queue_lock';
UPDATE perfschema_history.events_waits_summary_global_by_event_name
   SET count_star = 2, sum_timer_wait = 1000
 WHERE snapshot_id = :fourth AND event_name = 'wait/synch/mutex/app/queue_lock';
UPDATE perfschema_history.snapshots SET creation_time_ns = creation_time_ns + 1 WHERE snapshot_id = :fifth;
UPDATE perfschema_history.events_waits_summary_global_by_event_name
   SET count_star = 7, sum_timer_wait = 7000
 WHERE snapshot_id = :fifth AND event_name = 'wait/synch/mutex/app/queue_lock';
-- Intervals of 2 s each, so that the rates are exact.
UPDATE perfschema_history.snapshots s SET taken_at = '2026-01-01 00:00:00+00'::timestamptz + (s.snapshot_id - :first_id) * interval '2 s';
SELECT snapshot_id - :first_id AS snapshot, seconds, count_star, sum_timer_wait, waits_per_second,
       seconds_waited_per_second, new_series
  FROM perfschema_history.waits_delta
 WHERE event_name = 'wait/synch/mutex/app/queue_lock' ORDER BY snapshot_id;
SELECT count(*) AS negative_deltas FROM perfschema_history.waits_delta WHERE count_star < 0 OR sum_timer_wait < 0;

-- A second foreign schema is a series of its own.
CREATE SCHEMA snap2;
IMPORT FOREIGN SCHEMA performance_schema LIMIT TO (status, events_waits_summary_global_by_event_name)
  FROM SERVER pfs_snap INTO snap2;
SELECT perfschema_snapshot('snap2') > 0 AS taken;
SELECT perfschema_snapshot('snap2') > 0 AS taken_again;
SELECT foreign_schema, count(DISTINCT snapshot_id) AS intervals FROM perfschema_history.waits_delta
 GROUP BY 1 ORDER BY 1;

-- Retention of zero or less would drop every snapshot: an error, nothing dropped.
SELECT count(*) AS snapshots_before FROM perfschema_history.snapshots;
SELECT perfschema_snapshot_retention('-1 day') AS dropped;
SELECT perfschema_snapshot_retention('0') AS dropped;
SELECT perfschema_snapshot_retention('1 mon -31 days', 'no_such_history') AS dropped;
SELECT count(*) AS snapshots_after FROM perfschema_history.snapshots;
-- Retention: everything older than a day (the edited times are in the past).
SELECT perfschema_snapshot_retention('1 day') AS dropped;
SELECT count(*) AS rows_left FROM perfschema_history.events_waits_summary_global_by_event_name
 WHERE snapshot_id < :fifth + 1;
SELECT perfschema_snapshot_retention('1 day', 'no_such_history') AS nothing;

-- Bad input: a schema that does not exist, a schema without perfschema tables.
SELECT perfschema_snapshot('no_such_schema');
CREATE SCHEMA empty;
SELECT perfschema_snapshot('empty');

-- Folded stacks for flame graphs: thread class; statement; stage; wait; source.
SELECT stack, picoseconds FROM perfschema_folded_waits('snap');
SELECT sum(picoseconds) = (SELECT sum(timer_wait) FROM snap.events_waits_history_long) AS all_waiting_time
  FROM perfschema_folded_waits('snap');
SELECT perfschema_folded_waits('empty');

-- A wait whose stage or statement is gone from the histories (history_long keeps
-- more waits than stages, more stages than statements) is left out, with a notice:
-- a code path never shows at two depths. Local tables stand in for the foreign ones.
CREATE SCHEMA fold;
CREATE TABLE fold.threads (thread_id bigint, name text);
INSERT INTO fold.threads VALUES (1, 'thread/app/worker');
CREATE TABLE fold.events_waits_history_long (thread_id bigint, event_id bigint, event_name text, source text,
  timer_wait bigint, nesting_event_id bigint, nesting_event_type text);
CREATE TABLE fold.events_stages_history_long (thread_id bigint, event_id bigint, event_name text,
  nesting_event_id bigint, nesting_event_type text);
CREATE TABLE fold.events_stages_history (LIKE fold.events_stages_history_long);
CREATE TABLE fold.events_stages_current (LIKE fold.events_stages_history_long);
CREATE TABLE fold.events_statements_history_long (thread_id bigint, event_id bigint, event_name text);
CREATE TABLE fold.events_statements_history (LIKE fold.events_statements_history_long);
CREATE TABLE fold.events_statements_current (LIKE fold.events_statements_history_long);
CREATE TABLE fold.events_waits_current (LIKE fold.events_waits_history_long);
-- statement 10 > stage 11 > wait 12: all held; stage 21 > wait 22: its statement 20
-- is gone; wait 32: its stage 31 is gone; wait 42: its statement 40 is gone; wait
-- 50 nests in nothing; wait 13 in wait 12, wait 72 in the running wait 71 (current)
-- in stage 11: with wait 12; wait 62 in wait 61, gone
INSERT INTO fold.events_statements_history_long VALUES (1, 10, 'statement/app/query');
INSERT INTO fold.events_stages_history_long VALUES (1, 11, 'stage/app/reading', 10, 'STATEMENT'),
  (1, 21, 'stage/app/reading', 20, 'STATEMENT');
INSERT INTO fold.events_waits_history_long VALUES
  (1, 12, 'wait/io/file/app/data', 'db.cpp:1', 1000, 11, 'STAGE'),
  (1, 22, 'wait/io/file/app/data', 'db.cpp:1', 200, 21, 'STAGE'),
  (1, 32, 'wait/io/file/app/data', 'db.cpp:1', 30, 31, 'STAGE'),
  (1, 42, 'wait/io/file/app/data', 'db.cpp:1', 4, 40, 'STATEMENT'),
  (1, 50, 'wait/synch/mutex/app/lock', 'db.cpp:9', 5, NULL, NULL),
  (1, 13, 'wait/synch/mutex/app/lock', 'db.cpp:9', 6000, 12, 'WAIT'),
  (1, 62, 'wait/synch/mutex/app/lock', 'db.cpp:9', 70000, 61, 'WAIT'),
  (1, 72, 'wait/synch/mutex/app/lock', 'db.cpp:9', 800000, 71, 'WAIT');
INSERT INTO fold.events_waits_current VALUES (1, 71, 'wait/synch/cond/app/ready', 'db.cpp:5', NULL, 11, 'STAGE');
SELECT stack, picoseconds FROM perfschema_folded_waits('fold');

SET client_min_messages = warning;
DROP SCHEMA perfschema_history CASCADE;
DROP SCHEMA snap, snap2, empty, fold CASCADE;
DROP SERVER pfs_snap;
RESET client_min_messages;
