--
-- TRUNCATE, as MySQL does it: the event tables are emptied, the summaries
-- reset, setup_actors and setup_objects emptied; the tables MySQL refuses to
-- truncate refuse it.  Like the other changes it belongs to the transaction.
-- (A second server reads the same file through a symbolic link: what the
-- instrumented process sees.)
--
\! build/tools/pfs_fixture --mode=0666 /tmp/perfschema_fdw_regress/truncate.region
\! ln -sf /tmp/perfschema_fdw_regress/truncate.region /tmp/perfschema_fdw_regress/truncate-file.region
CREATE SERVER pfs_truncate FOREIGN DATA WRAPPER perfschema_fdw
  OPTIONS (region '/tmp/perfschema_fdw_regress/truncate.region');
CREATE SERVER pfs_truncate_file FOREIGN DATA WRAPPER perfschema_fdw
  OPTIONS (region '/tmp/perfschema_fdw_regress/truncate-file.region', follow_symlinks 'true');
CREATE SCHEMA pst;
IMPORT FOREIGN SCHEMA performance_schema FROM SERVER pfs_truncate INTO pst;
CREATE SCHEMA file;
IMPORT FOREIGN SCHEMA performance_schema FROM SERVER pfs_truncate_file INTO file;

CREATE FUNCTION event_rows(schema text) RETURNS TABLE (tab text, "rows" bigint)
LANGUAGE plpgsql AS $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['events_waits_current', 'events_waits_history', 'events_waits_history_long'] LOOP
    tab := t;
    EXECUTE format('SELECT count(*) FROM %I.%I', schema, t) INTO "rows";
    RETURN NEXT;
  END LOOP;
END $$;
CREATE FUNCTION summary_counts(schema text) RETURNS TABLE (tab text, count_star numeric)
LANGUAGE plpgsql AS $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['events_waits_summary_global_by_event_name',
                           'events_waits_summary_by_instance',
                           'events_waits_summary_by_thread_by_event_name',
                           'file_summary_by_event_name', 'file_summary_by_instance',
                           'table_io_waits_summary_by_table',
                           'table_io_waits_summary_by_index_usage'] LOOP
    tab := t;
    EXECUTE format('SELECT sum(count_star) FROM %I.%I', schema, t) INTO count_star;
    RETURN NEXT;
  END LOOP;
END $$;

SELECT * FROM event_rows('pst');
SELECT * FROM summary_counts('pst');

--
-- The event tables
--
BEGIN;
TRUNCATE pst.events_waits_history;
SELECT * FROM event_rows('pst');
SELECT * FROM event_rows('file');
ROLLBACK;
SELECT * FROM event_rows('pst');
TRUNCATE pst.events_waits_history;
SELECT * FROM event_rows('file');
TRUNCATE pst.events_waits_current, pst.events_waits_history_long;
SELECT * FROM event_rows('file');
-- (the summaries keep their counts)
SELECT * FROM summary_counts('file');

--
-- The summaries: events_waits_summary_global_by_event_name and _by_instance
-- reset the statistics of instances and classes, also the file and table io
-- ones (as MySQL); the others reset their own
--
BEGIN;
TRUNCATE pst.file_summary_by_instance;
SELECT * FROM summary_counts('pst');
SELECT event_name, count_star, sum_timer_wait FROM pst.events_waits_summary_global_by_event_name
 ORDER BY event_name;
ROLLBACK;
BEGIN;
TRUNCATE pst.table_io_waits_summary_by_index_usage;
SELECT * FROM summary_counts('pst');
SAVEPOINT s;
TRUNCATE pst.events_waits_summary_by_thread_by_event_name;
SELECT * FROM summary_counts('pst');
ROLLBACK TO SAVEPOINT s;
SELECT * FROM summary_counts('file');
COMMIT;
SELECT * FROM summary_counts('file');
TRUNCATE pst.events_waits_summary_by_thread_by_event_name;
SELECT * FROM summary_counts('file');
TRUNCATE pst.events_waits_summary_global_by_event_name;
SELECT * FROM summary_counts('file');
SELECT * FROM file.events_waits_summary_global_by_event_name ORDER BY event_name;
SELECT * FROM file.file_summary_by_instance ORDER BY file_name;

--
-- setup_actors and setup_objects: emptied; rows inserted after the TRUNCATE
-- in the same transaction stay
--
BEGIN;
TRUNCATE pst.setup_actors, pst.setup_objects;
SELECT count(*) FROM pst.setup_actors;
INSERT INTO pst.setup_actors (host, "user", role) VALUES ('%', '%', '%');
INSERT INTO pst.setup_objects (object_type, object_schema, object_name) VALUES ('TABLE', 'shop', '%');
SELECT * FROM pst.setup_actors;
SELECT * FROM pst.setup_objects;
SELECT count(*) FROM file.setup_actors;
COMMIT;
SELECT * FROM file.setup_actors;
SELECT * FROM file.setup_objects;

--
-- Tables MySQL refuses to truncate; one of them in a list truncates nothing
--
TRUNCATE pst.setup_instruments;
TRUNCATE pst.setup_consumers;
TRUNCATE pst.setup_timers;
TRUNCATE pst.threads;
TRUNCATE pst.performance_timers;
TRUNCATE pst.mutex_instances;
TRUNCATE pst.rwlock_instances;
TRUNCATE pst.cond_instances;
TRUNCATE pst.file_instances;
TRUNCATE pst.status;
\echo :LAST_ERROR_SQLSTATE
TRUNCATE pst.setup_actors, pst.status;
SELECT count(*) FROM file.setup_actors;

SET client_min_messages = warning;
DROP FUNCTION event_rows(text);
DROP FUNCTION summary_counts(text);
DROP SCHEMA file CASCADE;
DROP SERVER pfs_truncate_file;
DROP SCHEMA pst CASCADE;
DROP SERVER pfs_truncate;
RESET client_min_messages;
