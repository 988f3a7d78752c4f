--
-- Every table and column, on the deterministic fixture region (see
-- tools/pfs_fixture.cpp for what it holds).  Times are picoseconds: the
-- fixture's NANOSECOND converter maps raw values to exact picoseconds.
--
SELECT * FROM ps.setup_instruments ORDER BY name;
SELECT * FROM ps.setup_consumers ORDER BY name;
SELECT * FROM ps.setup_timers;
SELECT * FROM ps.setup_actors ORDER BY host, "user", role;

-- performance_timers: TIMER_FREQUENCY is the provider's calibration (the
-- fixture's: NANOSECOND, MICROSECOND, MILLISECOND; CYCLE, TICK and THREAD_CPU
-- NULL); resolution and overhead are measured by the backend at each scan
SELECT timer_name, timer_frequency,
       (timer_resolution IS NULL OR timer_resolution > 0)
         AND (timer_overhead IS NULL OR timer_overhead > 0) AS consistent
  FROM ps.performance_timers ORDER BY timer_name;
SELECT count(*) FILTER (WHERE timer_overhead IS NOT NULL) >= 3 AS most_timers_readable_here
  FROM ps.performance_timers;

SELECT * FROM ps.threads ORDER BY thread_id;

-- events_waits_current: thread 1 waits for queue_lock (running) inside a
-- completed timed_wait; thread 2's last wait (not timed) completed
SELECT * FROM ps.events_waits_current WHERE end_event_id IS NOT NULL
 ORDER BY thread_id, event_id;
-- a running wait's end is "now": show how it relates to its start
SELECT thread_id, event_id, event_name, source, timer_start,
       timer_end > timer_start AS ends_after_start,
       timer_wait = timer_end - timer_start AS wait_is_end_minus_start,
       nesting_event_id, nesting_event_type, operation
  FROM ps.events_waits_current WHERE end_event_id IS NULL;

-- events_waits_history: per thread, oldest first (thread 2's ring of 4 wrapped
-- after 6 events); the scan returns rows in that order
SELECT thread_id, event_id FROM ps.events_waits_history;
SELECT * FROM ps.events_waits_history ORDER BY thread_id, event_id;

-- events_waits_history_long: completed waits only (the running one is not shown)
SELECT * FROM ps.events_waits_history_long ORDER BY thread_id, event_id;

SELECT * FROM ps.events_waits_summary_global_by_event_name ORDER BY event_name;
SELECT count(*) AS all_rows FROM ps.events_waits_summary_by_thread_by_event_name;
SELECT * FROM ps.events_waits_summary_by_thread_by_event_name
 WHERE count_star > 0 ORDER BY thread_id, event_name;
SELECT * FROM ps.events_waits_summary_by_instance ORDER BY object_instance_begin;

SELECT * FROM ps.mutex_instances ORDER BY object_instance_begin;
SELECT * FROM ps.rwlock_instances ORDER BY object_instance_begin;
-- lock_contention_by_instance: entries of one key, and of one site interned
-- twice, added up; an earlier life of
-- a lock's slot not shown
SELECT * FROM ps.lock_contention_by_instance ORDER BY event_name, blocking_source;
SELECT * FROM ps.cond_instances ORDER BY object_instance_begin;

-- status: the rows of the wait arrays and their lost counters (arrays added to
-- the layout add rows); values that depend on the process, the moment or the
-- record sizes of the layout as booleans
SELECT variable_name,
       CASE WHEN variable_name IN ('pid', 'creation_time_ns') THEN (variable_value > 0)::text
            WHEN variable_name = 'provider_alive' THEN (variable_value IN (0, 1))::text
            WHEN variable_name LIKE '%memory' THEN (variable_value > 0)::text
            ELSE variable_value::text END AS value
  FROM ps.status
 WHERE variable_name ~ '^(layout_version|pid|provider_alive|creation_time_ns|ready|exited|setup_generation|next_thread_id|wait_stack_depth|history_per_thread|history_long_batch|total_memory|torn_rows_skipped|invalid_rows_skipped)$'
    OR variable_name ~ '^(instrument_classes|threads|events_waits_.*|mutex_instances|rwlock_instances|cond_instances|setup_actors|sources)_(size|memory)$'
    OR variable_name ~ '^(mutex|rwlock|cond|thread)_(classes|instances)_lost$'
    OR variable_name IN ('locker_lost', 'sources_lost')
 ORDER BY variable_name;
SELECT count(*) >= 55 AS all_rows FROM ps.status;
-- CYCLE's rate checks by the provider (README, "CYCLE on virtual machines")
SELECT variable_name, variable_value >= 0 AS present
  FROM ps.status WHERE variable_name LIKE 'cycle%' ORDER BY variable_name;

-- a role with SELECT on a foreign table reads it without any other privilege
GRANT USAGE ON SCHEMA ps TO regress_pfs_plain;
GRANT SELECT ON ps.setup_consumers TO regress_pfs_plain;
SET ROLE regress_pfs_plain;
SELECT count(*) FROM ps.setup_consumers;
SELECT count(*) FROM ps.threads;
RESET ROLE;
REVOKE ALL ON ps.setup_consumers FROM regress_pfs_plain;
REVOKE ALL ON SCHEMA ps FROM regress_pfs_plain;
