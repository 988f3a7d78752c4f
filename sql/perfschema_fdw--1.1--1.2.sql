/* sql/perfschema_fdw--1.1--1.2.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION perfschema_fdw UPDATE TO '1.2'" to load this file. \quit

-- 1.2: memory (region layout 5; import the foreign schema again for the new
-- tables memory_summary_global_by_event_name and ..._by_thread_by_event_name).
-- perfschema_create_views also makes the sys schema's memory views. The views of
-- 1.1 stay in their function, renamed perfschema_create_views_1_1, which the new
-- perfschema_create_views calls first: each version adds its views without
-- repeating the earlier ones.
ALTER FUNCTION perfschema_create_views(name, name) RENAME TO perfschema_create_views_1_1;
COMMENT ON FUNCTION perfschema_create_views_1_1(name, name) IS
  'the views of perfschema_fdw 1.1 (waits, io, statements, lock waits); perfschema_create_views makes them and the later ones';

CREATE FUNCTION perfschema_create_views(target_schema name, source_schema name)
RETURNS SETOF name
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
  -- In each body: %1$s = the source schema, %2$s = the size formatter (empty for
  -- the x$ views: "(expr)" is the raw number of bytes).
  own_schema name;
  v record;
  missing text[];
BEGIN
  SELECT n.nspname INTO own_schema
    FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
   WHERE e.extname = 'perfschema_fdw';
  RETURN QUERY EXECUTE format('SELECT * FROM %I.perfschema_create_views_1_1($1, $2)', own_schema)
    USING target_schema, source_schema;
  FOR v IN
    SELECT * FROM (VALUES
      -- sys.memory_by_thread_by_current_bytes: what each thread holds now.
      ('memory_by_thread_by_current_bytes',
       ARRAY['memory_summary_by_thread_by_event_name', 'threads'], $$
        SELECT m.thread_id,
               CASE WHEN t.processlist_user IS NOT NULL
                    THEN t.processlist_user || '@' || coalesce(t.processlist_host, '')
                    ELSE regexp_replace(t.name, '^thread/', '') END AS "user",
               sum(m.current_count_used) AS current_count_used,
               %2$s(sum(m.current_number_of_bytes_used)) AS current_allocated,
               %2$s(coalesce(sum(m.current_number_of_bytes_used) / nullif(sum(m.current_count_used), 0), 0))
                 AS current_avg_alloc,
               %2$s(max(m.current_number_of_bytes_used)) AS current_max_alloc,
               %2$s(sum(m.sum_number_of_bytes_alloc)) AS total_allocated
          FROM %1$s.memory_summary_by_thread_by_event_name m
          JOIN %1$s.threads t ON t.thread_id = m.thread_id
         GROUP BY m.thread_id, 2
         ORDER BY sum(m.current_number_of_bytes_used) DESC, m.thread_id $$),
      -- sys.memory_global_by_current_bytes: the classes that hold memory now.
      ('memory_global_by_current_bytes', ARRAY['memory_summary_global_by_event_name'], $$
        SELECT event_name,
               current_count_used AS current_count,
               %2$s(current_number_of_bytes_used) AS current_alloc,
               %2$s(coalesce(current_number_of_bytes_used / nullif(current_count_used, 0), 0)) AS current_avg_alloc,
               high_count_used AS high_count,
               %2$s(high_number_of_bytes_used) AS high_alloc,
               %2$s(coalesce(high_number_of_bytes_used / nullif(high_count_used, 0), 0)) AS high_avg_alloc
          FROM %1$s.memory_summary_global_by_event_name
         WHERE current_number_of_bytes_used > 0
         ORDER BY current_number_of_bytes_used DESC, event_name $$),
      -- sys.memory_global_total: all memory the program's classes hold now.
      ('memory_global_total', ARRAY['memory_summary_global_by_event_name'], $$
        SELECT %2$s(sum(current_number_of_bytes_used)) AS total_allocated
          FROM %1$s.memory_summary_global_by_event_name $$),
      -- sys.innodb_lock_waits (MySQL sys 8.0): which data lock waits for which, the
      -- waiting and the blocking transaction, thread and running statement. MySQL's
      -- view joins information_schema.innodb_trx, which does not exist here: left
      -- out are wait_started, wait_age, wait_age_secs, waiting_trx_started,
      -- waiting_trx_age, waiting_trx_rows_locked, waiting_trx_rows_modified and the
      -- same blocking_trx_* columns. The pids are threads.processlist_id (MySQL's
      -- trx_mysql_thread_id), the queries the threads' running statements.
      ('innodb_lock_waits',
       ARRAY['data_lock_waits', 'data_locks', 'threads', 'events_statements_current'], $$
        SELECT '`' || rl.object_schema || '`.`' || rl.object_name || '`' AS locked_table,
               rl.object_schema AS locked_table_schema,
               rl.object_name AS locked_table_name,
               rl.partition_name AS locked_table_partition,
               rl.subpartition_name AS locked_table_subpartition,
               rl.index_name AS locked_index,
               rl.lock_type AS locked_type,
               w.requesting_engine_transaction_id AS waiting_trx_id,
               rt.processlist_id AS waiting_pid,
               rs.sql_text AS waiting_query,
               w.requesting_engine_lock_id AS waiting_lock_id,
               rl.lock_mode AS waiting_lock_mode,
               w.blocking_engine_transaction_id AS blocking_trx_id,
               bt.processlist_id AS blocking_pid,
               bs.sql_text AS blocking_query,
               w.blocking_engine_lock_id AS blocking_lock_id,
               bl.lock_mode AS blocking_lock_mode,
               'KILL QUERY ' || bt.processlist_id AS sql_kill_blocking_query,
               'KILL ' || bt.processlist_id AS sql_kill_blocking_connection
          FROM %1$s.data_lock_waits w
          JOIN %1$s.data_locks rl ON rl.engine = w.engine AND rl.engine_lock_id = w.requesting_engine_lock_id
          JOIN %1$s.data_locks bl ON bl.engine = w.engine AND bl.engine_lock_id = w.blocking_engine_lock_id
          LEFT JOIN %1$s.threads rt ON rt.thread_id = w.requesting_thread_id
          LEFT JOIN %1$s.threads bt ON bt.thread_id = w.blocking_thread_id
          LEFT JOIN LATERAL (SELECT s.sql_text FROM %1$s.events_statements_current s
                              WHERE s.thread_id = w.requesting_thread_id AND s.end_event_id IS NULL
                              ORDER BY s.event_id DESC LIMIT 1) rs ON true
          LEFT JOIN LATERAL (SELECT s.sql_text FROM %1$s.events_statements_current s
                              WHERE s.thread_id = w.blocking_thread_id AND s.end_event_id IS NULL
                              ORDER BY s.event_id DESC LIMIT 1) bs ON true
         ORDER BY w.requesting_engine_transaction_id, w.requesting_engine_lock_id, w.blocking_engine_lock_id $$),
      -- sys.schema_table_lock_waits: each metadata lock request PENDING behind a
      -- GRANTED lock on the same object, who waits and who blocks. As MySQL's, but
      -- for every OBJECT_TYPE (the program's own too), named in a first column
      -- object_type, and a NULL schema matches a NULL schema; waiting_query is the
      -- waiter's innermost running statement's SQL_TEXT (MySQL: processlist_info),
      -- and sql_kill_blocking_query / sql_kill_blocking_connection are left out
      -- (there is no KILL to run here).
      ('schema_table_lock_waits',
       ARRAY['metadata_locks', 'threads', 'events_statements_current'], $$
        WITH statement AS (
               SELECT DISTINCT ON (thread_id) thread_id, sql_text, rows_affected, rows_examined
                 FROM %1$s.events_statements_current WHERE end_event_id IS NULL
                ORDER BY thread_id, event_id DESC)
        SELECT g.object_type,
               g.object_schema,
               g.object_name,
               p.owner_thread_id AS waiting_thread_id,
               pt.processlist_id AS waiting_pid,
               CASE WHEN pt.processlist_user IS NOT NULL
                    THEN pt.processlist_user || '@' || coalesce(pt.processlist_host, '')
                    ELSE regexp_replace(pt.name, '^thread/', '') END AS waiting_account,
               p.lock_type AS waiting_lock_type,
               p.lock_duration AS waiting_lock_duration,
               ps.sql_text AS waiting_query,
               pt.processlist_time AS waiting_query_secs,
               ps.rows_affected AS waiting_query_rows_affected,
               ps.rows_examined AS waiting_query_rows_examined,
               g.owner_thread_id AS blocking_thread_id,
               gt.processlist_id AS blocking_pid,
               CASE WHEN gt.processlist_user IS NOT NULL
                    THEN gt.processlist_user || '@' || coalesce(gt.processlist_host, '')
                    ELSE regexp_replace(gt.name, '^thread/', '') END AS blocking_account,
               g.lock_type AS blocking_lock_type,
               g.lock_duration AS blocking_lock_duration
          FROM %1$s.metadata_locks g
          JOIN %1$s.metadata_locks p
            ON p.object_type = g.object_type
           AND p.object_schema IS NOT DISTINCT FROM g.object_schema
           AND p.object_name IS NOT DISTINCT FROM g.object_name
           AND g.lock_status = 'GRANTED'
           AND p.lock_status = 'PENDING'
          LEFT JOIN %1$s.threads gt ON gt.thread_id = g.owner_thread_id
          LEFT JOIN %1$s.threads pt ON pt.thread_id = p.owner_thread_id
          LEFT JOIN statement ps ON ps.thread_id = p.owner_thread_id
         ORDER BY 1, 2, 3, waiting_thread_id, blocking_thread_id $$)
    ) AS d(name, tables, body)
  LOOP
    SELECT array_agg(format('"%s"', t)) INTO missing
      FROM unnest(v.tables) AS t
     WHERE to_regclass(format('%I.%I', source_schema, t)) IS NULL;
    IF missing IS NOT NULL THEN
      RAISE NOTICE 'skipping view "%": schema "%" has no %', v.name, source_schema,
        CASE WHEN cardinality(missing) = 1 THEN 'table ' || missing[1]
             ELSE 'tables ' || array_to_string(missing, ', ') END;
      CONTINUE;
    END IF;
    EXECUTE format('CREATE OR REPLACE VIEW %I.%I AS %s', target_schema, v.name,
                   format(v.body, quote_ident(source_schema), 'pg_catalog.pg_size_pretty'));
    RETURN NEXT v.name::name;
    EXECUTE format('CREATE OR REPLACE VIEW %I.%I AS %s', target_schema, 'x$' || v.name,
                   format(v.body, quote_ident(source_schema), ''));
    RETURN NEXT ('x$' || v.name)::name;
  END LOOP;
END
$function$;

COMMENT ON FUNCTION perfschema_create_views(name, name) IS
  'creates sys-schema-like views (waits by latency, by class, by thread, latest waits; file and table io; statement analysis, 95th percentile, errors and warnings, waits by statement; lock waits and lock wait cycles; memory by thread, by class and in all; data lock waits (innodb_lock_waits); metadata lock waits (schema_table_lock_waits), when present) in target_schema over an imported performance_schema in source_schema';
