-- A timeline of the history_long tables as Chrome trace-event JSON, which
-- Perfetto (ui.perfetto.dev) and chrome://tracing open: a track per thread
-- (pid = tid = THREAD_ID, named after threads.NAME), and every finished
-- statement, stage and wait as a complete event ("ph":"X"), nested by time;
-- ts and dur are microseconds from TIMER_START and TIMER_WAIT (picoseconds / 1e6,
-- exact). The args carry EVENT_ID, SOURCE and the object or text.
--
--   psql -X -At -v schema=ps -f scripts/timeline.sql -o timeline.json
--
-- schema is the schema of the imported perfschema tables (default ps).
\if :{?schema}
\else
\set schema ps
\endif
SELECT json_build_object('displayTimeUnit', 'ns', 'traceEvents', coalesce(json_agg(e), '[]'))
  FROM (SELECT json_build_object('ph', 'M', 'name', 'thread_name', 'pid', thread_id, 'tid', thread_id,
                                 'args', json_build_object('name', name || ' ' || thread_id)) AS e
          FROM :"schema".threads
        UNION ALL
        SELECT json_build_object('ph', 'X', 'cat', 'statement', 'name', coalesce(s.digest_text, s.event_name),
                                 'pid', s.thread_id, 'tid', s.thread_id,
                                 'ts', s.timer_start / 1000000.0, 'dur', s.timer_wait / 1000000.0,
                                 'args', json_build_object('event_id', s.event_id, 'event_name', s.event_name,
                                                           'source', s.source, 'sql_text', s.sql_text,
                                                           -- qualified: bare current_schema is
                                                           -- PostgreSQL's function
                                                           'current_schema', s.current_schema,
                                                           'rows_sent', s.rows_sent,
                                                           'rows_examined', s.rows_examined))
          FROM :"schema".events_statements_history_long s
         WHERE s.end_event_id IS NOT NULL AND s.timer_start IS NOT NULL AND s.timer_wait IS NOT NULL
        UNION ALL
        SELECT json_build_object('ph', 'X', 'cat', 'stage', 'name', event_name,
                                 'pid', thread_id, 'tid', thread_id,
                                 'ts', timer_start / 1000000.0, 'dur', timer_wait / 1000000.0,
                                 'args', json_build_object('event_id', event_id, 'source', source,
                                                           'nesting_event_id', nesting_event_id))
          FROM :"schema".events_stages_history_long
         WHERE end_event_id IS NOT NULL AND timer_start IS NOT NULL AND timer_wait IS NOT NULL
        UNION ALL
        SELECT json_build_object('ph', 'X', 'cat', 'wait', 'name', event_name,
                                 'pid', thread_id, 'tid', thread_id,
                                 'ts', timer_start / 1000000.0, 'dur', timer_wait / 1000000.0,
                                 'args', json_build_object('event_id', event_id, 'source', source,
                                                           'operation', operation,
                                                           'object_type', object_type,
                                                           'object_schema', object_schema,
                                                           'object_name', object_name,
                                                           'index_name', index_name,
                                                           'number_of_bytes', number_of_bytes,
                                                           'nesting_event_id', nesting_event_id,
                                                           'nesting_event_type', nesting_event_type,
                                                           'blocking_thread_id', blocking_thread_id))
          FROM :"schema".events_waits_history_long
         WHERE end_event_id IS NOT NULL AND timer_start IS NOT NULL AND timer_wait IS NOT NULL) events;
