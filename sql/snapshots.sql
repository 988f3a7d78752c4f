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

SET client_min_messages = warning;
DROP SCHEMA perfschema_history CASCADE;
DROP SCHEMA snap, snap2, empty CASCADE;
DROP SERVER pfs_snap;
RESET client_min_messages;
