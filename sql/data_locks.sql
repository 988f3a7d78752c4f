--
-- data_locks and data_lock_waits (MySQL 8.0) of the fixture's lock manager:
-- transaction 1047 holds the table and row 17 of shop.orders, 1048 holds the
-- table and waits for the row. A record being written and a freed one are not
-- rows; a wait naming a freed lock, or a reused record by its older version, is
-- not a row. Neither table can be truncated. sys.innodb_lock_waits over them.
--
\! build/tools/pfs_fixture --mode=0666 /tmp/perfschema_fdw_regress/data_locks.region
CREATE SERVER pfs_data_locks FOREIGN DATA WRAPPER perfschema_fdw
  OPTIONS (region '/tmp/perfschema_fdw_regress/data_locks.region');
CREATE SCHEMA psdl;
IMPORT FOREIGN SCHEMA performance_schema
  LIMIT TO (data_locks, data_lock_waits, threads, events_statements_current)
  FROM SERVER pfs_data_locks INTO psdl;

\x on
SELECT * FROM psdl.data_locks ORDER BY engine_lock_id;
SELECT * FROM psdl.data_lock_waits;
\x off
SELECT engine_lock_id, lock_status FROM psdl.data_locks WHERE lock_status = 'WAITING';
SELECT count(*) FROM psdl.data_locks WHERE thread_id = 1;
-- MySQL cannot truncate them, nor change them.
TRUNCATE psdl.data_locks;
TRUNCATE psdl.data_lock_waits;
DELETE FROM psdl.data_locks;

CREATE SCHEMA sysdl;
SET client_min_messages = warning;  -- the other views' tables are not imported: skipped
SELECT * FROM perfschema_create_views('sysdl', 'psdl') AS v WHERE v LIKE '%innodb%';
RESET client_min_messages;
\x on
SELECT * FROM sysdl.innodb_lock_waits;
\x off
SELECT count(*) FROM sysdl."x$innodb_lock_waits";

DROP SCHEMA sysdl CASCADE;
DROP SCHEMA psdl CASCADE;
DROP SERVER pfs_data_locks;
