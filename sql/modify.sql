--
-- Setup changes from SQL: UPDATE of the setup tables, INSERT and DELETE of
-- setup_actors and setup_objects rows, following MySQL's rules; values are
-- checked; the changes belong to the transaction (applied at its commit,
-- discarded at rollback, seen by its own later reads).
--
-- The test writes its own region, writable by the server's OS user.  A second
-- server reads the same file through a symbolic link (follow_symlinks): it shows what the file
-- holds, i.e. what the instrumented process sees (pending changes are kept per
-- region path, so they do not show there).
--
\! build/tools/pfs_fixture --mode=0666 /tmp/perfschema_fdw_regress/modify.region
\! ln -sf /tmp/perfschema_fdw_regress/modify.region /tmp/perfschema_fdw_regress/modify-file.region
CREATE SERVER pfs_modify FOREIGN DATA WRAPPER perfschema_fdw
  OPTIONS (region '/tmp/perfschema_fdw_regress/modify.region');
CREATE SERVER pfs_file FOREIGN DATA WRAPPER perfschema_fdw
  OPTIONS (region '/tmp/perfschema_fdw_regress/modify-file.region', follow_symlinks 'true');
CREATE SCHEMA psw;
IMPORT FOREIGN SCHEMA performance_schema FROM SERVER pfs_modify INTO psw;
CREATE SCHEMA file;
IMPORT FOREIGN SCHEMA performance_schema
  LIMIT TO (setup_instruments, setup_consumers, setup_timers, threads, setup_actors, setup_objects)
  FROM SERVER pfs_file INTO file;

--
-- What each table takes (IsForeignRelUpdatable): UPDATE on the six setup
-- tables, INSERT and DELETE on setup_actors and setup_objects, nothing on the
-- others; PostgreSQL's own errors for the rest
--
SELECT c.relname,
       pg_relation_is_updatable(c.oid, false) & 4 <> 0 AS "update",
       pg_relation_is_updatable(c.oid, false) & 8 <> 0 AS "insert",
       pg_relation_is_updatable(c.oid, false) & 16 <> 0 AS "delete"
  FROM pg_class c
 WHERE c.relnamespace = 'psw'::regnamespace AND pg_relation_is_updatable(c.oid, false) <> 0
 ORDER BY c.relname;
SELECT count(*) AS read_only_tables
  FROM pg_class c
 WHERE c.relnamespace = 'psw'::regnamespace AND pg_relation_is_updatable(c.oid, false) = 0;
INSERT INTO psw.setup_instruments VALUES ('wait/synch/mutex/app/new', 'YES', 'YES', 'NO');
DELETE FROM psw.setup_consumers;
INSERT INTO psw.threads (thread_id, name, type, instrumented, history) VALUES (9, 'x', 'x', 'YES', 'YES');
DELETE FROM psw.threads;
UPDATE psw.events_waits_current SET timer_wait = 0;
DELETE FROM psw.events_waits_history_long;
UPDATE psw.mutex_instances SET locked_by_thread_id = NULL;
UPDATE psw.performance_timers SET timer_frequency = 1;
UPDATE psw.status SET variable_value = 0;

-- columns MySQL does not let change: refused at plan time, naming them
UPDATE psw.setup_instruments SET name = 'x';
UPDATE psw.setup_consumers SET name = 'x' WHERE name = 'events_waits_current';
UPDATE psw.setup_timers SET name = 'statement';
UPDATE psw.threads SET thread_id = 9 WHERE thread_id = 1;
UPDATE psw.threads SET processlist_user = 'bob';
UPDATE psw.setup_actors SET host = 'h';
UPDATE psw.setup_objects SET object_name = 'x';
-- ... also in EXPLAIN
EXPLAIN (COSTS OFF) UPDATE psw.setup_actors SET "user" = 'bob';
EXPLAIN (COSTS OFF) UPDATE psw.setup_instruments SET enabled = 'NO';

--
-- setup_instruments: ENABLED, TIMED and TRACE_ENABLED; YES/NO in any case,
-- stored in upper case
--
UPDATE psw.setup_instruments SET enabled = 'no', timed = 'No'
 WHERE name = 'wait/synch/mutex/app/queue_lock' RETURNING *;
UPDATE psw.setup_instruments SET timed = 'yes' WHERE name LIKE 'wait/synch/rwlock/%' RETURNING name, timed;
SELECT * FROM psw.setup_instruments ORDER BY name;
SELECT * FROM file.setup_instruments ORDER BY name;
-- anything but YES and NO is an error, and nothing changes
UPDATE psw.setup_instruments SET enabled = 'YESS';
UPDATE psw.setup_instruments SET enabled = 'NO%';
UPDATE psw.setup_instruments SET timed = '';
UPDATE psw.setup_instruments SET timed = NULL;
\echo :LAST_ERROR_SQLSTATE
UPDATE psw.setup_instruments SET enabled = 'NO', timed = 'maybe';
SELECT name, enabled, timed FROM file.setup_instruments ORDER BY name;

-- TRACE_ENABLED (the trace worklog): 'YES' needs ENABLED 'YES'; disabling an
-- instrument ends its tracing
UPDATE psw.setup_instruments SET trace_enabled = 'yes'
 WHERE name LIKE 'wait/synch/mutex/app/%' RETURNING *;
\echo :LAST_ERROR_SQLSTATE
UPDATE psw.setup_instruments SET trace_enabled = 'yes'
 WHERE name = 'wait/synch/mutex/app/cache_lock' RETURNING *;
UPDATE psw.setup_instruments SET enabled = 'YES', trace_enabled = 'YES'
 WHERE name = 'wait/synch/mutex/app/idle_lock' RETURNING *;
UPDATE psw.setup_instruments SET enabled = 'NO', trace_enabled = 'YES'
 WHERE name = 'wait/synch/mutex/app/cache_lock';
UPDATE psw.setup_instruments SET enabled = 'NO'
 WHERE name = 'wait/synch/mutex/app/idle_lock' RETURNING *;
SELECT * FROM file.setup_instruments WHERE trace_enabled = 'YES';

--
-- setup_consumers, setup_timers, threads
--
UPDATE psw.setup_consumers SET enabled = 'no' WHERE name LIKE '%history%' RETURNING *;
UPDATE psw.setup_consumers SET enabled = 'off';
SELECT * FROM file.setup_consumers ORDER BY name;
UPDATE psw.setup_consumers SET enabled = 'YES';

-- timer names performance_timers knows, and the region's provider has (the
-- fixture's calibrated only NANOSECOND)
UPDATE psw.setup_timers SET timer_name = 'nanosecond' RETURNING *;
UPDATE psw.setup_timers SET timer_name = 'CYCLE';
UPDATE psw.setup_timers SET timer_name = 'SECOND';
UPDATE psw.setup_timers SET timer_name = NULL;
SELECT * FROM file.setup_timers;

UPDATE psw.threads SET instrumented = 'no', history = 'NO' WHERE thread_id = 1
  RETURNING thread_id, name, instrumented, history;
UPDATE psw.threads SET history = 'y' WHERE thread_id = 2;
SELECT thread_id, instrumented, history FROM file.threads ORDER BY thread_id;
UPDATE psw.threads SET instrumented = 'YES', history = 'YES';
SELECT thread_id, instrumented, history FROM file.threads ORDER BY thread_id;

--
-- setup_actors: INSERT, DELETE, UPDATE of ENABLED, HISTORY, TRACE_ENABLED
--
SELECT * FROM psw.setup_actors ORDER BY host, "user", role;
-- the fixture's array has room for 3 rows, all taken
INSERT INTO psw.setup_actors VALUES ('%', 'bob', '%', 'YES', 'YES', 'NO');
\echo :LAST_ERROR_SQLSTATE
DELETE FROM psw.setup_actors WHERE "user" = 'zoë' RETURNING *;
-- columns left out (NULL) take MySQL's defaults
INSERT INTO psw.setup_actors (host, "user") VALUES ('db1', 'bob') RETURNING *;
SELECT * FROM file.setup_actors ORDER BY host, "user", role;
-- a duplicate row
INSERT INTO psw.setup_actors (host, "user", role) VALUES ('db1', 'bob', '%');
\echo :LAST_ERROR_SQLSTATE
INSERT INTO psw.setup_actors (host, "user", role) VALUES ('db1', 'bob', '%') ON CONFLICT DO NOTHING;
-- values out of their domain
INSERT INTO psw.setup_actors (host, "user", role, enabled) VALUES ('db2', 'bob', '%', 'sometimes');
INSERT INTO psw.setup_actors (host, "user", role) VALUES ('', 'bob', '%');
INSERT INTO psw.setup_actors (host, "user", role) VALUES (repeat('h', 64), 'bob', '%');
\echo :LAST_ERROR_SQLSTATE
-- a NULL the INSERT names is an error, as in UPDATE ... SET enabled = NULL (MySQL's
-- columns are NOT NULL); only a column left out takes MySQL's default
INSERT INTO psw.setup_actors (host, "user", role) VALUES (NULL, 'bob', '%');
\echo :LAST_ERROR_SQLSTATE
INSERT INTO psw.setup_actors VALUES ('db2', 'bob', '%', NULL, 'YES', 'NO');
INSERT INTO psw.setup_actors (host, "user", role, history) SELECT 'db2', 'bob', '%', NULL;
UPDATE psw.setup_actors SET enabled = NULL WHERE "user" = 'bob';
SELECT count(*) AS bob_rows FROM psw.setup_actors WHERE "user" = 'bob';
UPDATE psw.setup_actors SET enabled = 'no', trace_enabled = 'yes' WHERE "user" = 'bob' RETURNING *;
UPDATE psw.setup_actors SET history = 'nope';
SELECT * FROM file.setup_actors ORDER BY host, "user", role;
DELETE FROM psw.setup_actors WHERE "user" = 'bob';
-- the longest values that fit
INSERT INTO psw.setup_actors (host, "user", role) VALUES (repeat('h', 63), repeat('u', 31), repeat('r', 31))
  RETURNING length(host), length("user"), length(role);
SELECT length(host), length("user"), length(role) FROM file.setup_actors WHERE length(host) = 63;
DELETE FROM psw.setup_actors WHERE length(host) = 63;

--
-- setup_objects: OBJECT_TYPE 'TABLE' only (the provider instruments tables)
--
SELECT * FROM psw.setup_objects ORDER BY object_schema, object_name;
INSERT INTO psw.setup_objects VALUES ('TABLE', 'shop', 'items', 'YES', 'YES');
\echo :LAST_ERROR_SQLSTATE
DELETE FROM psw.setup_objects WHERE object_schema = 'shop';
INSERT INTO psw.setup_objects VALUES ('PROCEDURE', 'shop', 'items', 'YES', 'YES');
\echo :LAST_ERROR_SQLSTATE
INSERT INTO psw.setup_objects (object_type, object_schema, object_name, timed)
  VALUES ('table', 'shop', 'items', 'no') RETURNING *;
INSERT INTO psw.setup_objects (object_schema) VALUES ('%');
\echo :LAST_ERROR_SQLSTATE
UPDATE psw.setup_objects SET enabled = 'NO' WHERE object_name = 'items' RETURNING *;
SELECT * FROM file.setup_objects ORDER BY object_schema, object_name;

--
-- Transactions: changes are seen by the transaction at once, by the region
-- (the instrumented process) at commit, never after a rollback
--
BEGIN;
UPDATE psw.setup_instruments SET enabled = 'YES', timed = 'YES'
 WHERE name = 'wait/synch/mutex/app/queue_lock';
INSERT INTO psw.setup_actors (host, "user", role) VALUES ('db2', 'carol', '%');
DELETE FROM psw.setup_actors WHERE host = '%';
UPDATE psw.setup_consumers SET enabled = 'NO' WHERE name = 'events_waits_current';
SELECT name, enabled, timed FROM psw.setup_instruments WHERE name = 'wait/synch/mutex/app/queue_lock';
SELECT * FROM psw.setup_actors ORDER BY host, "user", role;
SELECT * FROM psw.setup_consumers WHERE enabled = 'NO';
-- (a join with the pending changes on both sides)
SELECT a.host, a."user", c.name
  FROM psw.setup_actors a JOIN psw.setup_consumers c ON c.enabled = 'NO'
 ORDER BY 1, 2;
SELECT name, enabled, timed FROM file.setup_instruments WHERE name = 'wait/synch/mutex/app/queue_lock';
SELECT * FROM file.setup_actors ORDER BY host, "user", role;
ROLLBACK;
SELECT name, enabled, timed FROM psw.setup_instruments WHERE name = 'wait/synch/mutex/app/queue_lock';
SELECT * FROM psw.setup_actors ORDER BY host, "user", role;
SELECT * FROM psw.setup_consumers WHERE enabled = 'NO';

BEGIN;
UPDATE psw.setup_instruments SET enabled = 'YES', timed = 'YES'
 WHERE name = 'wait/synch/mutex/app/queue_lock';
DELETE FROM psw.setup_actors WHERE host = '%';
INSERT INTO psw.setup_actors (host, "user", role) VALUES ('db2', 'carol', '%');
-- a row inserted, changed and deleted again by the same transaction
INSERT INTO psw.setup_actors (host, "user", role) VALUES ('tmp', 'tmp', 'tmp');
UPDATE psw.setup_actors SET history = 'NO' WHERE host = 'tmp' RETURNING *;
DELETE FROM psw.setup_actors WHERE host = 'tmp' RETURNING *;
SELECT * FROM psw.setup_actors ORDER BY host, "user", role;
COMMIT;
SELECT name, enabled, timed FROM file.setup_instruments WHERE name = 'wait/synch/mutex/app/queue_lock';
SELECT * FROM file.setup_actors ORDER BY host, "user", role;

-- savepoints: ROLLBACK TO drops the changes made since, RELEASE keeps them;
-- an error inside a savepoint leaves the earlier changes
BEGIN;
UPDATE psw.setup_consumers SET enabled = 'NO' WHERE name = 'events_waits_history';
SAVEPOINT a;
UPDATE psw.setup_consumers SET enabled = 'NO' WHERE name = 'events_waits_history_long';
SAVEPOINT b;
UPDATE psw.setup_consumers SET enabled = 'NO' WHERE name = 'events_waits_current';
SELECT name FROM psw.setup_consumers WHERE enabled = 'NO' ORDER BY name;
ROLLBACK TO SAVEPOINT b;
SELECT name FROM psw.setup_consumers WHERE enabled = 'NO' ORDER BY name;
RELEASE SAVEPOINT a;
SAVEPOINT c;
UPDATE psw.setup_consumers SET enabled = 'NO' WHERE name = 'global_instrumentation';
UPDATE psw.setup_consumers SET enabled = 'MAYBE';
ROLLBACK TO SAVEPOINT c;
SELECT name FROM psw.setup_consumers WHERE enabled = 'NO' ORDER BY name;
SELECT name FROM file.setup_consumers WHERE enabled = 'NO' ORDER BY name;
COMMIT;
SELECT name FROM file.setup_consumers WHERE enabled = 'NO' ORDER BY name;
UPDATE psw.setup_consumers SET enabled = 'YES';

-- an error aborts the transaction: nothing of it is applied
BEGIN;
UPDATE psw.setup_consumers SET enabled = 'NO';
UPDATE psw.setup_instruments SET timed = 'forever';
COMMIT;
SELECT count(*) AS consumers_off FROM file.setup_consumers WHERE enabled = 'NO';

-- a statement sees the rows as they were when it started (its own changes
-- come with the next command): every consumer flips once
UPDATE psw.setup_consumers c SET enabled = CASE o.enabled WHEN 'YES' THEN 'NO' ELSE 'YES' END
  FROM psw.setup_consumers o
 WHERE o.name = c.name AND o.name LIKE 'events_waits_history%'
RETURNING c.name, o.enabled AS was, c.enabled AS now;
WITH changed AS (
  UPDATE psw.setup_consumers SET enabled = 'YES' RETURNING name
)
SELECT (SELECT count(*) FROM changed) AS changed,
       (SELECT count(*) FROM psw.setup_consumers WHERE enabled = 'NO') AS still_no_in_this_statement;
SELECT count(*) AS consumers_off FROM psw.setup_consumers WHERE enabled = 'NO';

-- a prepared transaction could not hold the changes
BEGIN;
UPDATE psw.setup_consumers SET enabled = 'NO' WHERE name = 'events_waits_current';
PREPARE TRANSACTION 'pfs';
SELECT count(*) AS consumers_off FROM file.setup_consumers WHERE enabled = 'NO';

-- a cursor keeps reading what its query saw when it started
BEGIN;
DECLARE cur CURSOR FOR SELECT name, enabled FROM psw.setup_consumers ORDER BY name;
FETCH 2 FROM cur;
UPDATE psw.setup_consumers SET enabled = 'NO';
FETCH ALL FROM cur;
CLOSE cur;
ROLLBACK;

--
-- WL#2360's "save a setup and reload it later"
--
CREATE TABLE saved AS SELECT * FROM psw.setup_instruments;
UPDATE psw.setup_instruments SET enabled = 'NO', timed = 'NO', trace_enabled = 'NO';
SELECT count(*) FILTER (WHERE enabled = 'YES') AS enabled FROM file.setup_instruments;
UPDATE psw.setup_instruments s SET enabled = v.enabled, timed = v.timed
  FROM saved v WHERE s.name = v.name;
SELECT count(*) AS differ
  FROM file.setup_instruments s JOIN saved v USING (name)
 WHERE (s.enabled, s.timed) IS DISTINCT FROM (v.enabled, v.timed);
SELECT * FROM file.setup_instruments ORDER BY name;
DROP TABLE saved;

--
-- Privileges are PostgreSQL's: SELECT does not give UPDATE; column privileges
-- apply
--
CREATE ROLE regress_pfs_dba;
GRANT USAGE ON SCHEMA psw TO regress_pfs_dba;
GRANT SELECT ON psw.setup_instruments, psw.setup_actors TO regress_pfs_dba;
SET ROLE regress_pfs_dba;
SELECT count(*) FROM psw.setup_instruments;
UPDATE psw.setup_instruments SET enabled = 'NO';
DELETE FROM psw.setup_actors;
TRUNCATE psw.setup_actors;
RESET ROLE;
GRANT UPDATE (enabled) ON psw.setup_instruments TO regress_pfs_dba;
SET ROLE regress_pfs_dba;
UPDATE psw.setup_instruments SET enabled = 'NO' WHERE name = 'wait/synch/cond/app/queue_not_empty';
UPDATE psw.setup_instruments SET timed = 'NO' WHERE name = 'wait/synch/cond/app/queue_not_empty';
RESET ROLE;
SELECT name, enabled, timed FROM file.setup_instruments WHERE name LIKE 'wait/synch/cond/%';
-- turning tracing on writes files on the server: UPDATE on setup_actors is not
-- enough, it takes pg_write_server_files (WL#4878, trace: MySQL's FILE privilege)
GRANT UPDATE, INSERT, DELETE ON psw.setup_actors TO regress_pfs_dba;
SET ROLE regress_pfs_dba;
INSERT INTO psw.setup_actors (host, "user", role, trace_enabled) VALUES ('t', 't', 't', 'YES');
INSERT INTO psw.setup_actors (host, "user", role) VALUES ('t', 't', 't');
UPDATE psw.setup_actors SET trace_enabled = 'yes' WHERE host = 't';
UPDATE psw.setup_actors SET trace_enabled = 'NO', enabled = 'NO' WHERE host = 't' RETURNING *;
RESET ROLE;
GRANT pg_write_server_files TO regress_pfs_dba;
SET ROLE regress_pfs_dba;
UPDATE psw.setup_actors SET trace_enabled = 'yes' WHERE host = 't' RETURNING *;
DELETE FROM psw.setup_actors WHERE host = 't';
RESET ROLE;
SELECT count(*) FROM file.setup_actors WHERE host = 't';
REVOKE pg_write_server_files FROM regress_pfs_dba;
REVOKE ALL ON psw.setup_instruments, psw.setup_actors FROM regress_pfs_dba;
REVOKE ALL ON SCHEMA psw FROM regress_pfs_dba;
DROP ROLE regress_pfs_dba;

--
-- A region the server may read but not write: reads work, changes are refused
-- at once (not at commit)
--
\! build/tools/pfs_fixture --mode=0644 /tmp/perfschema_fdw_regress/modify-ro.region
CREATE SERVER pfs_ro FOREIGN DATA WRAPPER perfschema_fdw
  OPTIONS (region '/tmp/perfschema_fdw_regress/modify-ro.region');
CREATE SCHEMA ro;
IMPORT FOREIGN SCHEMA performance_schema LIMIT TO (setup_instruments, setup_actors, events_waits_history)
  FROM SERVER pfs_ro INTO ro;
SELECT count(*) FROM ro.setup_instruments;
UPDATE ro.setup_instruments SET enabled = 'NO';
\echo :LAST_ERROR_SQLSTATE
INSERT INTO ro.setup_actors (host, "user", role) VALUES ('h', 'u', 'r');
TRUNCATE ro.events_waits_history;
EXPLAIN (COSTS OFF) UPDATE ro.setup_instruments SET enabled = 'NO';
-- writable again: the same server works without reconnecting
\! chmod 0666 /tmp/perfschema_fdw_regress/modify-ro.region
UPDATE ro.setup_instruments SET enabled = 'NO' WHERE name = 'wait/synch/mutex/app/queue_lock';
SELECT name, enabled FROM ro.setup_instruments WHERE enabled = 'NO' ORDER BY name;

SET client_min_messages = warning;
DROP SCHEMA ro CASCADE;
DROP SERVER pfs_ro;
DROP SCHEMA file CASCADE;
DROP SERVER pfs_file;
DROP SCHEMA psw CASCADE;
DROP SERVER pfs_modify;
RESET client_min_messages;
