--
-- A server that reads a directory of regions (one per process: PFS_REGION with
-- %p) as one: every table shows the rows of every region with the process that
-- wrote them (process_id, program); a damaged file is skipped with a WARNING
-- and a status row, never an ERROR that hides the others; setup changes go to
-- the region each row came from (or to every region: INSERT naming no process,
-- TRUNCATE) at commit, all or none.
--
-- The fixture tool writes regions of exited processes with the pids it is given.
--
\! rm -rf /tmp/perfschema_fdw_regress/dir && mkdir -m 1777 /tmp/perfschema_fdw_regress/dir
\! build/tools/pfs_fixture --mode=0666 --pid=101 /tmp/perfschema_fdw_regress/dir/app.101.pfs
\! build/tools/pfs_fixture --mode=0666 --pid=102 /tmp/perfschema_fdw_regress/dir/app.102.pfs
\! build/tools/pfs_fixture --mode=0666 --pid=103 /tmp/perfschema_fdw_regress/dir/app.103.pfs
\! build/tools/pfs_fixture --mode=0666 --pid=104 /tmp/perfschema_fdw_regress/dir/.hidden.pfs
\! build/tools/pfs_fixture --mode=0666 --pid=105 --kind=truncated /tmp/perfschema_fdw_regress/dir/app.105.pfs

-- options: exclusive with region, absolute, a directory, the same privilege
CREATE SERVER both_options FOREIGN DATA WRAPPER perfschema_fdw
  OPTIONS (region '/tmp/perfschema_fdw_regress/good.region',
           region_directory '/tmp/perfschema_fdw_regress/dir');
CREATE SERVER relative_dir FOREIGN DATA WRAPPER perfschema_fdw OPTIONS (region_directory 'dir');
CREATE SERVER file_as_dir FOREIGN DATA WRAPPER perfschema_fdw
  OPTIONS (region_directory '/tmp/perfschema_fdw_regress/dir/app.101.pfs');
CREATE SERVER dir_as_file FOREIGN DATA WRAPPER perfschema_fdw
  OPTIONS (region '/tmp/perfschema_fdw_regress/dir');
CREATE ROLE pfs_dir_user;
GRANT USAGE ON FOREIGN DATA WRAPPER perfschema_fdw TO pfs_dir_user;
SET ROLE pfs_dir_user;
CREATE SERVER not_allowed FOREIGN DATA WRAPPER perfschema_fdw
  OPTIONS (region_directory '/tmp/perfschema_fdw_regress/dir');
RESET ROLE;
REVOKE USAGE ON FOREIGN DATA WRAPPER perfschema_fdw FROM pfs_dir_user;
DROP ROLE pfs_dir_user;

CREATE SERVER pfs_dir FOREIGN DATA WRAPPER perfschema_fdw
  OPTIONS (region_directory '/tmp/perfschema_fdw_regress/dir');
CREATE SCHEMA dir;
IMPORT FOREIGN SCHEMA performance_schema
  LIMIT TO (threads, setup_instruments, setup_actors, status, events_waits_history_long,
            events_waits_summary_global_by_event_name)
  FROM SERVER pfs_dir INTO dir;
-- the appended columns
\d dir.threads
SELECT attname FROM pg_attribute
 WHERE attrelid = 'dir.status'::regclass AND attnum > 2 ORDER BY attnum;

-- every region's rows, with the process that wrote them; one WARNING for the
-- damaged file
SELECT process_id, program, count(*) AS threads FROM dir.threads GROUP BY 1, 2 ORDER BY 1;
-- status: one provider_alive row per region, region_damaged for the damaged one
SELECT process_id, program, variable_name, variable_value, region_file
  FROM dir.status WHERE variable_name IN ('provider_alive', 'region_damaged', 'pid')
 ORDER BY region_file, variable_name;
-- per process: a condition on process_id reads only that region
SELECT process_id, event_name, count_star
  FROM dir.events_waits_summary_global_by_event_name
 WHERE process_id = 102 AND count_star > 0 ORDER BY event_name;
EXPLAIN (VERBOSE, COSTS OFF)
SELECT thread_id FROM dir.threads WHERE process_id IN (101, 103) AND program = 'pfs_fixture';
SELECT process_id, count(*) FROM dir.threads
 WHERE process_id IN (101, 103) AND program = 'pfs_fixture' GROUP BY 1 ORDER BY 1;
-- totals across processes
SELECT event_name, sum(count_star) AS count_star, count(*) AS processes
  FROM dir.events_waits_summary_global_by_event_name
 WHERE count_star > 0 GROUP BY 1 ORDER BY 1;
-- the same results with pushdown off
SET perfschema_fdw.pushdown = off;
SELECT process_id, count(*) FROM dir.threads
 WHERE process_id IN (101, 103) AND program = 'pfs_fixture' GROUP BY 1 ORDER BY 1;
RESET perfschema_fdw.pushdown;
-- the same results with one region mapped at a time (each file mapped when a
-- scan reaches it, and let go after)
SET perfschema_fdw.max_mapped_regions = 1;
SELECT process_id, program, count(*) AS threads FROM dir.threads GROUP BY 1, 2 ORDER BY 1;
SELECT event_name, sum(count_star) AS count_star, count(*) AS processes
  FROM dir.events_waits_summary_global_by_event_name
 WHERE count_star > 0 GROUP BY 1 ORDER BY 1;
SET perfschema_fdw.max_mapped_regions = 0;
RESET perfschema_fdw.max_mapped_regions;

-- a file that is not a region at all is a damaged member too; removed, gone
\! echo 'not a region' > /tmp/perfschema_fdw_regress/dir/notes.txt
SELECT count(*) FROM dir.threads;
\! rm /tmp/perfschema_fdw_regress/dir/notes.txt /tmp/perfschema_fdw_regress/dir/app.105.pfs
SELECT count(*) FROM dir.threads;

--
-- Setup changes: each row's region; at commit, all or none
--
UPDATE dir.setup_instruments SET enabled = 'NO'
 WHERE name = 'wait/synch/mutex/app/queue_lock' AND process_id = 102;
UPDATE dir.setup_instruments SET timed = 'NO' WHERE name = 'wait/io/file/app/log';
SELECT process_id, name, enabled, timed FROM dir.setup_instruments
 WHERE name IN ('wait/synch/mutex/app/queue_lock', 'wait/io/file/app/log') ORDER BY 1, 2;
-- the appended columns cannot change
UPDATE dir.setup_instruments SET process_id = 1;
-- within a transaction: its own changes, then rolled back
BEGIN;
UPDATE dir.setup_instruments SET enabled = 'NO' WHERE name = 'wait/io/file/app/log';
SELECT process_id, enabled FROM dir.setup_instruments WHERE name = 'wait/io/file/app/log' ORDER BY 1;
ROLLBACK;
SELECT process_id, enabled FROM dir.setup_instruments WHERE name = 'wait/io/file/app/log' ORDER BY 1;
-- DELETE: the rows' regions; INSERT naming no process: a row in every region;
-- naming one: in its region
DELETE FROM dir.setup_actors WHERE "user" = 'alice' AND process_id = 101;
SELECT process_id, host, "user" FROM dir.setup_actors WHERE host <> '%' ORDER BY 1, 2, 3;
DELETE FROM dir.setup_actors WHERE host <> '%';
INSERT INTO dir.setup_actors (host, "user", role) VALUES ('db1', 'alice', '%');
INSERT INTO dir.setup_actors (host, "user", role, process_id) VALUES ('db2', 'bob', '%', 103);
INSERT INTO dir.setup_actors (host, "user", role, process_id) VALUES ('db2', 'bob', '%', 999);
SELECT process_id, host, "user" FROM dir.setup_actors WHERE host <> '%' ORDER BY 1, 2, 3;
-- TRUNCATE: every region
SELECT process_id, count(*) FROM dir.events_waits_history_long GROUP BY 1 ORDER BY 1;
TRUNCATE dir.events_waits_history_long;
SELECT count(*) FROM dir.events_waits_history_long;
-- all or none: a region removed before COMMIT fails the commit, and the
-- others keep their setup
BEGIN;
UPDATE dir.setup_instruments SET enabled = 'NO' WHERE name = 'wait/io/file/app/log';
\! rm /tmp/perfschema_fdw_regress/dir/app.103.pfs
COMMIT;
SELECT process_id, enabled FROM dir.setup_instruments WHERE name = 'wait/io/file/app/log' ORDER BY 1;
-- a region the server may read but not write: changes naming it fail at once,
-- changes of the other regions work
\! build/tools/pfs_fixture --mode=0644 --pid=106 /tmp/perfschema_fdw_regress/dir/app.106.pfs
UPDATE dir.setup_instruments SET enabled = 'NO' WHERE name = 'wait/io/file/app/log' AND process_id = 102;
UPDATE dir.setup_instruments SET enabled = 'NO' WHERE name = 'wait/io/file/app/log';
\echo :LAST_ERROR_SQLSTATE
TRUNCATE dir.events_waits_history_long;
SELECT process_id, enabled FROM dir.setup_instruments WHERE name = 'wait/io/file/app/log' ORDER BY 1;

-- a missing directory: an ERROR, as a missing region file
\! rm -rf /tmp/perfschema_fdw_regress/dir
SELECT count(*) FROM dir.threads;
\echo :LAST_ERROR_SQLSTATE
DROP SCHEMA dir CASCADE;
DROP SERVER pfs_dir;
