--
-- metadata_locks (MySQL 8.0) of the fixture's known locks: thread 2 holds
-- EXCLUSIVE on TABLE shop.orders, thread 3 waits PENDING for SHARED_READ on it, a
-- program's own TENANT lock with a column and no owner is a VICTIM; every column,
-- the table not truncatable, and sys.schema_table_lock_waits over it.
--
\! build/tools/pfs_fixture --mode=0666 /tmp/perfschema_fdw_regress/metadata_locks.region
CREATE SERVER pfs_mdl FOREIGN DATA WRAPPER perfschema_fdw
  OPTIONS (region '/tmp/perfschema_fdw_regress/metadata_locks.region');
CREATE SCHEMA psm;
IMPORT FOREIGN SCHEMA performance_schema
  LIMIT TO (metadata_locks, threads, events_statements_current)
  FROM SERVER pfs_mdl INTO psm;

\d psm.metadata_locks
SELECT * FROM psm.metadata_locks ORDER BY object_instance_begin;
SELECT lock_status, count(*) FROM psm.metadata_locks GROUP BY 1 ORDER BY 1;
-- MySQL does not let TRUNCATE empty it.
TRUNCATE psm.metadata_locks;

-- Who waits for whom.
CREATE SCHEMA sysm;
SELECT * FROM perfschema_create_views('sysm', 'psm') AS v WHERE v LIKE '%lock_waits%';
SELECT * FROM sysm.schema_table_lock_waits;
SELECT waiting_thread_id, blocking_thread_id FROM sysm.x$schema_table_lock_waits;

DROP SCHEMA sysm CASCADE;
DROP SCHEMA psm CASCADE;
DROP SERVER pfs_mdl;
