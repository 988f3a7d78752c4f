--
-- perfschema_create_views: sys-schema-like views over an imported schema
--
CREATE SCHEMA sys;
SELECT * FROM perfschema_create_views('sys', 'ps');
-- again: the views are replaced
SELECT count(*) FROM perfschema_create_views('sys', 'ps');

SELECT * FROM sys.waits_global_by_latency;
SELECT * FROM sys."x$waits_global_by_latency";
SELECT * FROM sys.wait_classes_global_by_latency;
SELECT * FROM sys."x$wait_classes_global_by_latency";
SELECT * FROM sys.waits_by_thread_by_latency;
SELECT * FROM sys."x$waits_by_thread_by_latency";
-- a running wait's latency grows: shown only as "known"
SELECT thread_id, thread, event_id, event, state, source, operation,
       CASE WHEN state = 'running' THEN (latency IS NOT NULL)::text ELSE latency END AS latency,
       object_instance_begin
  FROM sys.latest_waits_by_thread;
SELECT thread_id, event_id, state,
       CASE WHEN state = 'running' THEN (latency > 0)::text ELSE latency::text END AS latency
  FROM sys."x$latest_waits_by_thread";

-- who blocks whom: the fixture's process is not running, so no wait is a wait now
SELECT * FROM sys.lock_waits;
SELECT * FROM sys.lock_wait_cycles;

-- the wait-for graph on tables of our own with the same columns: a 3-thread
-- cycle (11 -> 12 -> 13 -> 11), a 2-thread cycle (21 <-> 22) with a thread
-- queued behind it (23 -> 21), a chain that ends (31 -> 32), a completed wait
-- and a condition wait that name a thread (not edges)
CREATE SCHEMA graph;
CREATE TABLE graph.events_waits_current (LIKE ps.events_waits_current);
CREATE TABLE graph.events_waits_history (LIKE ps.events_waits_history);
CREATE TABLE graph.events_waits_history_long (LIKE ps.events_waits_history_long);
CREATE TABLE graph.events_stages_current (LIKE ps.events_stages_current);
CREATE TABLE graph.events_statements_current (LIKE ps.events_statements_current);
CREATE TABLE graph.threads (LIKE ps.threads);
CREATE TABLE graph.status (LIKE ps.status);
INSERT INTO graph.status VALUES ('provider_alive', 1);
INSERT INTO graph.threads (thread_id, name, type, instrumented, history, controlled_memory,
                           max_controlled_memory, total_memory, max_total_memory)
  SELECT t, 'thread/app/worker' || t, 'BACKGROUND', 'YES', 'YES', 0, 0, 0, 0
    FROM unnest(ARRAY[11, 12, 13, 21, 22, 23, 31, 32]) AS t;
INSERT INTO graph.events_waits_current (thread_id, event_id, end_event_id, event_name, source, timer_start,
                                        timer_end, timer_wait, object_instance_begin, operation, flags,
                                        blocking_thread_id, blocking_event_id, signalling_thread_id)
VALUES (11, 5, NULL, 'wait/synch/mutex/app/a', 'a.cpp:1', 100, 900, 800, 4096, 'lock', 0, 12, 3, NULL),
       (12, 5, NULL, 'wait/synch/mutex/app/b', 'b.cpp:2', 200, 900, 700, 8192, 'lock', 0, 13, 3, NULL),
       (13, 5, NULL, 'wait/synch/rwlock/app/c', 'c.cpp:3', 300, 900, 600, 12288, 'read_lock', 0, 11, 3, NULL),
       (21, 7, NULL, 'wait/synch/mutex/app/d', 'd.cpp:4', 400, 900, 500, 16384, 'lock', 0, 22, 4, NULL),
       (22, 7, NULL, 'wait/synch/mutex/app/e', 'e.cpp:5', 450, 900, 450, 20480, 'lock', 0, 21, 4, NULL),
       (23, 2, NULL, 'wait/synch/mutex/app/e', 'e.cpp:6', 500, 900, 400, 20480, 'lock', 0, 21, 4, NULL),
       (31, 2, NULL, 'wait/synch/mutex/app/f', 'f.cpp:7', 600, 900, 300, 24576, 'lock', 0, 32, 1, NULL),
       (32, 2, 3, 'wait/synch/mutex/app/g', 'g.cpp:8', 600, 700, 100, 28672, 'lock', 0, 31, 1, NULL),
       (32, 4, NULL, 'wait/synch/cond/app/h', 'h.cpp:9', 800, 900, 100, 32768, 'wait', 0, NULL, NULL, 31);
-- thread 13's acquisition (event 3) of the lock thread 12 waits for, 300 ps before
-- "now" (the running waits' timer_end, 900)
INSERT INTO graph.events_waits_history (thread_id, event_id, end_event_id, event_name, source, timer_start,
                                        timer_end, timer_wait, object_instance_begin, operation, flags)
VALUES (13, 3, 4, 'wait/synch/mutex/app/b', 'b.cpp:20', 550, 600, 50, 8192, 'lock', 0);
CREATE SCHEMA sys_graph;
SELECT count(*) FROM perfschema_create_views('sys_graph', 'graph');
SELECT * FROM sys_graph.lock_wait_cycles;
SELECT threads_in_cycle, thread_ids, cycle_age FROM sys_graph."x$lock_wait_cycles";
SELECT waiting_thread_id, locked_lock, waiting_lock_mode, blocking_thread_id, blocking_thread,
       blocking_lock_source, blocking_lock_held, blocking_current_wait, wait_age
  FROM sys_graph."x$lock_waits" ORDER BY waiting_thread_id;
-- the process gone: no waits, no cycles
UPDATE graph.status SET variable_value = 0;
SELECT count(*) FROM sys_graph.lock_waits;
SELECT count(*) FROM sys_graph.lock_wait_cycles;
DROP SCHEMA sys_graph CASCADE;
DROP SCHEMA graph CASCADE;

-- users and hosts (1.3): the fixture's alice@localhost and the background threads
SELECT * FROM sys.user_summary;
SELECT * FROM sys."x$host_summary";
SELECT * FROM sys.user_summary_by_statement_type;
SELECT * FROM sys.user_summary_by_file_io;
SELECT * FROM sys."x$host_summary_by_file_io";

-- a partial import: the views whose tables are missing are skipped
CREATE SCHEMA sys_some;
SELECT * FROM perfschema_create_views('sys_some', 'ps_some');
SELECT * FROM perfschema_create_views('sys_some', 'no_such_schema');
SELECT * FROM perfschema_create_views('no_such_schema', 'ps');
DROP SCHEMA sys_some;
