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

-- a partial import: the views whose tables are missing are skipped
CREATE SCHEMA sys_some;
SELECT * FROM perfschema_create_views('sys_some', 'ps_some');
SELECT * FROM perfschema_create_views('sys_some', 'no_such_schema');
SELECT * FROM perfschema_create_views('no_such_schema', 'ps');
DROP SCHEMA sys_some;
