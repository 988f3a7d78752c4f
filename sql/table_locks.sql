--
-- table_lock_waits_summary_by_table (MySQL 8.0's table_tlws_by_table.cc) of the
-- fixture's known lock waits on shop.orders: every column (each kind, READ = the
-- read kinds, WRITE = the write kinds, STAR = both); TRUNCATE as MySQL, in the
-- transaction and once committed; table io's TRUNCATE leaves them, that of
-- events_waits_summary_global_by_event_name resets them.
--
\! build/tools/pfs_fixture --mode=0666 /tmp/perfschema_fdw_regress/table_locks.region
CREATE SERVER pfs_table_locks FOREIGN DATA WRAPPER perfschema_fdw
  OPTIONS (region '/tmp/perfschema_fdw_regress/table_locks.region');
CREATE SCHEMA pstl;
IMPORT FOREIGN SCHEMA performance_schema
  LIMIT TO (table_lock_waits_summary_by_table, table_io_waits_summary_by_table,
            events_waits_summary_global_by_event_name)
  FROM SERVER pfs_table_locks INTO pstl;

\x on
SELECT * FROM pstl.table_lock_waits_summary_by_table;
\x off

-- TRUNCATE of table io leaves the lock waits.
TRUNCATE pstl.table_io_waits_summary_by_table;
SELECT object_name, count_star, count_read, count_write, sum_timer_wait
  FROM pstl.table_lock_waits_summary_by_table;

-- Their own TRUNCATE, seen by the transaction itself, then rolled back.
BEGIN;
TRUNCATE pstl.table_lock_waits_summary_by_table;
SELECT object_name, count_star, sum_timer_wait, min_timer_read_normal, max_timer_write_external
  FROM pstl.table_lock_waits_summary_by_table;
ROLLBACK;
SELECT object_name, count_star, sum_timer_wait FROM pstl.table_lock_waits_summary_by_table;

-- Committed: in the region.
TRUNCATE pstl.table_lock_waits_summary_by_table;
SELECT object_name, count_star, sum_timer_wait, count_read_normal, min_timer_read_normal,
       avg_timer_read_normal, max_timer_read_normal
  FROM pstl.table_lock_waits_summary_by_table;

-- events_waits_summary_global_by_event_name's TRUNCATE resets them too (MySQL).
\! build/tools/pfs_fixture --mode=0666 /tmp/perfschema_fdw_regress/table_locks.region
SELECT object_name, count_star FROM pstl.table_lock_waits_summary_by_table;
TRUNCATE pstl.events_waits_summary_global_by_event_name;
SELECT object_name, count_star, sum_timer_wait FROM pstl.table_lock_waits_summary_by_table;

-- No other change.
UPDATE pstl.table_lock_waits_summary_by_table SET count_star = 1;

DROP SCHEMA pstl CASCADE;
DROP SERVER pfs_table_locks;
