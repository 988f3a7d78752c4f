--
-- The overflow horizon: sums of times beyond bigint (2^63 ps, 106.7 cumulative
-- days) and beyond 64 bits (2^64 ps) are exact numerics; one event's times stay
-- bigint.  The fixture's huge-sums region: queue_lock's first instance 2^64 + 5
-- ps, the log file's reads 2^63 + 1 ps, shop.orders' fetches without index
-- 2 * 2^64 ps.
--
\! build/tools/pfs_fixture --kind=huge-sums --mode=0666 /tmp/perfschema_fdw_regress/overflow.region
CREATE SERVER pfs_overflow FOREIGN DATA WRAPPER perfschema_fdw
  OPTIONS (region '/tmp/perfschema_fdw_regress/overflow.region');
CREATE SCHEMA pso;
IMPORT FOREIGN SCHEMA performance_schema
  LIMIT TO (events_waits_summary_by_instance, events_waits_summary_global_by_event_name,
            file_summary_by_instance, table_io_waits_summary_by_table)
  FROM SERVER pfs_overflow INTO pso;

-- Sums are numeric, the rest bigint.
SELECT column_name, data_type FROM information_schema.columns
 WHERE table_schema = 'pso' AND table_name = 'events_waits_summary_by_instance'
 ORDER BY ordinal_position;

SELECT event_name, object_instance_begin, count_star, sum_timer_wait,
       sum_timer_wait > 9223372036854775807 AS beyond_bigint,
       sum_timer_wait - 18446744073709551616 AS past_2_64,
       avg_timer_wait, max_timer_wait
  FROM pso.events_waits_summary_by_instance ORDER BY object_instance_begin;
SELECT event_name, count_star, sum_timer_wait
  FROM pso.events_waits_summary_global_by_event_name
 WHERE sum_timer_wait > 9223372036854775807 ORDER BY event_name;
SELECT file_name, sum_timer_wait, sum_timer_read, sum_timer_write, sum_timer_misc
  FROM pso.file_summary_by_instance ORDER BY file_name;
SELECT object_schema, object_name, sum_timer_wait, sum_timer_read, sum_timer_fetch
  FROM pso.table_io_waits_summary_by_table;
-- Exact arithmetic on them.
SELECT sum(sum_timer_wait) FROM pso.events_waits_summary_by_instance;

-- A condition on a numeric column is the executor's (not pushed down).
EXPLAIN (COSTS OFF) SELECT object_instance_begin FROM pso.events_waits_summary_by_instance
 WHERE sum_timer_wait > 9223372036854775807;
SELECT object_instance_begin FROM pso.events_waits_summary_by_instance
 WHERE sum_timer_wait > 9223372036854775807 ORDER BY 1;

-- TRUNCATE zeroes them: in the transaction's view first, in the region at COMMIT.
BEGIN;
TRUNCATE pso.events_waits_summary_by_instance;
SELECT object_instance_begin, sum_timer_wait FROM pso.events_waits_summary_by_instance ORDER BY 1;
ROLLBACK;
SELECT object_instance_begin, sum_timer_wait FROM pso.events_waits_summary_by_instance
 WHERE object_instance_begin = 4096;
TRUNCATE pso.events_waits_summary_by_instance;
SELECT object_instance_begin, sum_timer_wait FROM pso.events_waits_summary_by_instance ORDER BY 1;

SET client_min_messages = warning;
DROP SCHEMA pso CASCADE;
DROP SERVER pfs_overflow;
RESET client_min_messages;
