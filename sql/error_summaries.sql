--
-- The error summaries (MySQL 8.0's events_errors_summary_*) of the fixture's
-- known errors: the NULL row first, declared errors by number, the global table
-- the sum of the threads and of the threads that exited, FIRST_SEEN the earliest
-- and LAST_SEEN the latest; TRUNCATE as MySQL (by thread: the global totals stay).
--
\! build/tools/pfs_fixture --mode=0666 /tmp/perfschema_fdw_regress/error_summaries.region
CREATE SERVER pfs_errors FOREIGN DATA WRAPPER perfschema_fdw
  OPTIONS (region '/tmp/perfschema_fdw_regress/error_summaries.region');
CREATE SCHEMA pse;
IMPORT FOREIGN SCHEMA performance_schema
  LIMIT TO (events_errors_summary_global_by_error, events_errors_summary_by_thread_by_error, setup_instruments)
  FROM SERVER pfs_errors INTO pse;
SET timezone = 'UTC';

SELECT * FROM pse.events_errors_summary_global_by_error;
SELECT * FROM pse.events_errors_summary_by_thread_by_error
 WHERE sum_error_raised > 0 OR sum_error_handled > 0 ORDER BY thread_id, error_number NULLS FIRST;
-- Every thread has a row for each declared error and the NULL row.
SELECT thread_id, count(*) AS errors, count(first_seen) AS seen
  FROM pse.events_errors_summary_by_thread_by_error GROUP BY thread_id ORDER BY thread_id;

-- TRUNCATE of the by-thread table, seen by the transaction itself: its rows are
-- reset, the global totals stay.
BEGIN;
TRUNCATE pse.events_errors_summary_by_thread_by_error;
SELECT thread_id, error_number, sum_error_raised, sum_error_handled, first_seen
  FROM pse.events_errors_summary_by_thread_by_error WHERE thread_id = 2 ORDER BY error_number NULLS FIRST;
SELECT error_number, sum_error_raised, sum_error_handled FROM pse.events_errors_summary_global_by_error;
COMMIT;
-- ... and once committed, in the region.
SELECT sum(sum_error_raised) AS raised, count(first_seen) AS seen
  FROM pse.events_errors_summary_by_thread_by_error;
SELECT error_number, sum_error_raised, sum_error_handled, first_seen, last_seen
  FROM pse.events_errors_summary_global_by_error;

-- TRUNCATE of the global table resets everything.
TRUNCATE pse.events_errors_summary_global_by_error;
SELECT error_number, sum_error_raised, sum_error_handled, first_seen, last_seen
  FROM pse.events_errors_summary_global_by_error;

-- Neither table takes other changes.
UPDATE pse.events_errors_summary_global_by_error SET sum_error_raised = 1;
DELETE FROM pse.events_errors_summary_by_thread_by_error;

DROP SCHEMA pse CASCADE;
DROP SERVER pfs_errors;
