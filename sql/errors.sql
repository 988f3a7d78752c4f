--
-- Regions that cannot be shown: each is an ERROR with an SQLSTATE, a detail and
-- a hint, never a crash and never rows silently wrong.  Fixture regions are
-- written by build/tools/pfs_fixture --kind=...; the SQLSTATE is echoed after
-- each error.
--
CREATE SERVER broken FOREIGN DATA WRAPPER perfschema_fdw
  OPTIONS (region '/tmp/perfschema_fdw_regress/missing.region');
CREATE SCHEMA broken;
-- IMPORT does not read the region
IMPORT FOREIGN SCHEMA performance_schema
  LIMIT TO (setup_instruments, threads, events_waits_current, events_waits_history,
            events_waits_history_long, events_waits_summary_global_by_event_name,
            events_waits_summary_by_instance, mutex_instances, cond_instances, status)
  FROM SERVER broken INTO broken;

-- a missing file
\! rm -f /tmp/perfschema_fdw_regress/missing.region
SELECT * FROM broken.threads;
\echo :LAST_ERROR_SQLSTATE
-- planning does not need the file: EXPLAIN works, EXPLAIN ANALYZE reports it
EXPLAIN (COSTS OFF) SELECT * FROM broken.threads;
EXPLAIN (ANALYZE, COSTS OFF) SELECT * FROM broken.threads;
\echo :LAST_ERROR_SQLSTATE

-- a file the server's OS user cannot read
\! build/tools/pfs_fixture --mode=0600 /tmp/perfschema_fdw_regress/unreadable.region
ALTER SERVER broken OPTIONS (SET region '/tmp/perfschema_fdw_regress/unreadable.region');
SELECT * FROM broken.threads;
\echo :LAST_ERROR_SQLSTATE

-- not a file: refused when the server is changed (and at every open)
ALTER SERVER broken OPTIONS (SET region '/tmp');
\echo :LAST_ERROR_SQLSTATE

-- not a region
\! build/tools/pfs_fixture --kind=bad-magic /tmp/perfschema_fdw_regress/bad-magic.region
ALTER SERVER broken OPTIONS (SET region '/tmp/perfschema_fdw_regress/bad-magic.region');
SELECT * FROM broken.threads;
\echo :LAST_ERROR_SQLSTATE

-- a layout version newer than this build knows
\! build/tools/pfs_fixture --kind=bad-version /tmp/perfschema_fdw_regress/bad-version.region
ALTER SERVER broken OPTIONS (SET region '/tmp/perfschema_fdw_regress/bad-version.region');
SELECT * FROM broken.threads;
\echo :LAST_ERROR_SQLSTATE
-- an older layout version
\! build/tools/pfs_fixture --kind=old-version /tmp/perfschema_fdw_regress/old-version.region
ALTER SERVER broken OPTIONS (SET region '/tmp/perfschema_fdw_regress/old-version.region');
SELECT * FROM broken.threads;
\echo :LAST_ERROR_SQLSTATE

-- shorter than a header
\! build/tools/pfs_fixture --kind=too-small /tmp/perfschema_fdw_regress/too-small.region
ALTER SERVER broken OPTIONS (SET region '/tmp/perfschema_fdw_regress/too-small.region');
SELECT * FROM broken.threads;
\echo :LAST_ERROR_SQLSTATE

-- (the details of the next two errors give sizes that depend on the layout's
-- record sizes: shown tersely)
\set VERBOSITY terse
-- truncated: shorter than its header says
\! build/tools/pfs_fixture --kind=truncated /tmp/perfschema_fdw_regress/truncated.region
ALTER SERVER broken OPTIONS (SET region '/tmp/perfschema_fdw_regress/truncated.region');
SELECT * FROM broken.threads;
\echo :LAST_ERROR_SQLSTATE

-- an array that ends past the end of the file
\! build/tools/pfs_fixture --kind=array-past-end /tmp/perfschema_fdw_regress/array-past-end.region
ALTER SERVER broken OPTIONS (SET region '/tmp/perfschema_fdw_regress/array-past-end.region');
SELECT * FROM broken.events_waits_history_long;
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default

-- header sizes that contradict the arrays
\! build/tools/pfs_fixture --kind=inconsistent /tmp/perfschema_fdw_regress/inconsistent.region
ALTER SERVER broken OPTIONS (SET region '/tmp/perfschema_fdw_regress/inconsistent.region');
SELECT * FROM broken.threads;
\echo :LAST_ERROR_SQLSTATE

--
-- Garbage inside the arrays (valid header): rows whose instrument does not
-- exist make the scan of their table fail; fields out of their domain are
-- shown sanitized (NULL, '?', a clamped value); a half-written record is skipped
--
\! build/tools/pfs_fixture --kind=garbage /tmp/perfschema_fdw_regress/garbage.region
ALTER SERVER broken OPTIONS (SET region '/tmp/perfschema_fdw_regress/garbage.region');
SELECT * FROM broken.events_waits_history_long;
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM broken.cond_instances;
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM broken.events_waits_summary_by_instance;
SELECT * FROM broken.events_waits_summary_global_by_event_name;
SELECT name FROM broken.setup_instruments ORDER BY name;
SELECT thread_id, name, instrumented FROM broken.threads ORDER BY thread_id;
SELECT thread_id, event_id, event_name, source, timer_start, timer_wait, operation, number_of_bytes
  FROM broken.events_waits_history WHERE thread_id = 1 ORDER BY event_id;
SELECT name, object_instance_begin, locked_by_thread_id
  FROM broken.mutex_instances ORDER BY object_instance_begin;
SELECT thread_id, event_id FROM broken.events_waits_current ORDER BY thread_id, event_id;
SELECT variable_name, variable_value FROM broken.status
 WHERE variable_name IN ('torn_rows_skipped', 'invalid_rows_skipped') ORDER BY 1;

--
-- The cached mapping follows the file: a new file at the path, a file
-- truncated or rewritten in place are noticed at the next scan
--
\! build/tools/pfs_fixture /tmp/perfschema_fdw_regress/swap.region
ALTER SERVER broken OPTIONS (SET region '/tmp/perfschema_fdw_regress/swap.region');
SELECT count(*) FROM broken.threads;
\! build/tools/pfs_fixture --kind=bad-magic /tmp/perfschema_fdw_regress/swap.region
SELECT count(*) FROM broken.threads;
\! build/tools/pfs_fixture /tmp/perfschema_fdw_regress/swap.region
SELECT count(*) FROM broken.threads;
\! truncate -s 8192 /tmp/perfschema_fdw_regress/swap.region
\set VERBOSITY terse
SELECT count(*) FROM broken.threads;
\set VERBOSITY default
\! build/tools/pfs_fixture /tmp/perfschema_fdw_regress/swap.region
SELECT count(*) FROM broken.threads;
\! printf 'NOTAREGN' | dd of=/tmp/perfschema_fdw_regress/swap.region conv=notrunc status=none
SELECT count(*) FROM broken.threads;
\! rm /tmp/perfschema_fdw_regress/swap.region
SELECT count(*) FROM broken.threads;
\! build/tools/pfs_fixture /tmp/perfschema_fdw_regress/swap.region
SELECT count(*) FROM broken.threads;

-- an error inside a join with a user table leaves the session usable
\! build/tools/pfs_fixture --kind=bad-version /tmp/perfschema_fdw_regress/swap.region
BEGIN;
SAVEPOINT s;
SELECT o.team, count(*) FROM owners o JOIN broken.threads t ON true GROUP BY o.team;
ROLLBACK TO SAVEPOINT s;
SELECT o.team, count(*) FROM owners o JOIN ps.threads t ON true GROUP BY o.team ORDER BY 1;
COMMIT;

DROP SCHEMA broken CASCADE;
DROP SERVER broken;
