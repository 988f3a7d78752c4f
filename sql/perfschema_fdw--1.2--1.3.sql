/* sql/perfschema_fdw--1.2--1.3.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION perfschema_fdw UPDATE TO '1.3'" to load this file. \quit

-- 1.3: accounts, users and hosts (import the foreign schema again for the new
-- tables accounts, users, hosts and the summaries by account, user and host).
-- perfschema_create_views also makes the sys schema's user and host views
-- (user_summary, host_summary, and their by_statement_type and by_file_io forms).
-- The views of 1.2 stay in their function, renamed perfschema_create_views_1_2,
-- which the new perfschema_create_views calls first.
ALTER FUNCTION perfschema_create_views(name, name) RENAME TO perfschema_create_views_1_2;
COMMENT ON FUNCTION perfschema_create_views_1_2(name, name) IS
  'the views of perfschema_fdw 1.2 (those of 1.1, memory, data and metadata lock waits); perfschema_create_views makes them and the later ones';

CREATE FUNCTION perfschema_create_views(target_schema name, source_schema name)
RETURNS SETOF name
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
  -- In each body: %1$s = the source schema, %2$s = the time formatter, %3$s = the
  -- size formatter (both empty for the x$ views: "(expr)" is the raw value). As the
  -- sys schema, threads without an account (USER or HOST NULL) are 'background'.
  own_schema name;
  pico_formatter text;
  v record;
  missing text[];
BEGIN
  SELECT n.nspname INTO own_schema
    FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
   WHERE e.extname = 'perfschema_fdw';
  RETURN QUERY EXECUTE format('SELECT * FROM %I.perfschema_create_views_1_2($1, $2)', own_schema)
    USING target_schema, source_schema;
  pico_formatter := format('%I.format_pico_time', own_schema);
  FOR v IN
    SELECT * FROM (VALUES
      -- sys.user_summary: per user, its statements, file io, connections and memory.
      ('user_summary',
       ARRAY['accounts', 'events_statements_summary_by_user_by_event_name',
             'events_waits_summary_by_user_by_event_name', 'memory_summary_by_user_by_event_name'], $$
        SELECT coalesce(a."user", 'background') AS "user",
               coalesce(s.statements, 0) AS statements,
               %2$s(coalesce(s.latency, 0)) AS statement_latency,
               %2$s(coalesce(s.latency / nullif(s.statements, 0), 0)) AS statement_avg_latency,
               coalesce(s.table_scans, 0) AS table_scans,
               coalesce(f.ios, 0) AS file_ios,
               %2$s(coalesce(f.latency, 0)) AS file_io_latency,
               a.current_connections,
               a.total_connections,
               a.unique_hosts,
               %3$s(coalesce(m.current_bytes, 0)) AS current_memory,
               %3$s(coalesce(m.total_bytes, 0)) AS total_memory_allocated
          FROM (SELECT "user", sum(current_connections) AS current_connections,
                       sum(total_connections) AS total_connections, count(DISTINCT host) AS unique_hosts
                  FROM %1$s.accounts GROUP BY "user") a
          LEFT JOIN (SELECT "user", sum(count_star) AS statements, sum(sum_timer_wait) AS latency,
                            sum(sum_no_index_used + sum_no_good_index_used) AS table_scans
                       FROM %1$s.events_statements_summary_by_user_by_event_name GROUP BY "user") s
                 ON s."user" IS NOT DISTINCT FROM a."user"
          LEFT JOIN (SELECT "user", sum(count_star) AS ios, sum(sum_timer_wait) AS latency
                       FROM %1$s.events_waits_summary_by_user_by_event_name
                      WHERE event_name LIKE 'wait/io/file/%%' GROUP BY "user") f
                 ON f."user" IS NOT DISTINCT FROM a."user"
          LEFT JOIN (SELECT "user", sum(current_number_of_bytes_used) AS current_bytes,
                            sum(sum_number_of_bytes_alloc) AS total_bytes
                       FROM %1$s.memory_summary_by_user_by_event_name GROUP BY "user") m
                 ON m."user" IS NOT DISTINCT FROM a."user"
         ORDER BY coalesce(s.latency, 0) DESC, 1 $$),
      -- sys.host_summary: the same per host.
      ('host_summary',
       ARRAY['accounts', 'events_statements_summary_by_host_by_event_name',
             'events_waits_summary_by_host_by_event_name', 'memory_summary_by_host_by_event_name'], $$
        SELECT coalesce(a.host, 'background') AS host,
               coalesce(s.statements, 0) AS statements,
               %2$s(coalesce(s.latency, 0)) AS statement_latency,
               %2$s(coalesce(s.latency / nullif(s.statements, 0), 0)) AS statement_avg_latency,
               coalesce(s.table_scans, 0) AS table_scans,
               coalesce(f.ios, 0) AS file_ios,
               %2$s(coalesce(f.latency, 0)) AS file_io_latency,
               a.current_connections,
               a.total_connections,
               a.unique_users,
               %3$s(coalesce(m.current_bytes, 0)) AS current_memory,
               %3$s(coalesce(m.total_bytes, 0)) AS total_memory_allocated
          FROM (SELECT host, sum(current_connections) AS current_connections,
                       sum(total_connections) AS total_connections, count(DISTINCT "user") AS unique_users
                  FROM %1$s.accounts GROUP BY host) a
          LEFT JOIN (SELECT host, sum(count_star) AS statements, sum(sum_timer_wait) AS latency,
                            sum(sum_no_index_used + sum_no_good_index_used) AS table_scans
                       FROM %1$s.events_statements_summary_by_host_by_event_name GROUP BY host) s
                 ON s.host IS NOT DISTINCT FROM a.host
          LEFT JOIN (SELECT host, sum(count_star) AS ios, sum(sum_timer_wait) AS latency
                       FROM %1$s.events_waits_summary_by_host_by_event_name
                      WHERE event_name LIKE 'wait/io/file/%%' GROUP BY host) f
                 ON f.host IS NOT DISTINCT FROM a.host
          LEFT JOIN (SELECT host, sum(current_number_of_bytes_used) AS current_bytes,
                            sum(sum_number_of_bytes_alloc) AS total_bytes
                       FROM %1$s.memory_summary_by_host_by_event_name GROUP BY host) m
                 ON m.host IS NOT DISTINCT FROM a.host
         ORDER BY coalesce(s.latency, 0) DESC, 1 $$),
      -- sys.user_summary_by_statement_type: per user and statement class.
      ('user_summary_by_statement_type', ARRAY['events_statements_summary_by_user_by_event_name'], $$
        SELECT coalesce("user", 'background') AS "user",
               regexp_replace(event_name, '^.*/', '') AS statement,
               count_star AS total,
               %2$s(sum_timer_wait) AS total_latency,
               %2$s(max_timer_wait) AS max_latency,
               %2$s(sum_lock_time) AS lock_latency,
               sum_rows_sent AS rows_sent,
               sum_rows_examined AS rows_examined,
               sum_rows_affected AS rows_affected,
               sum_no_index_used + sum_no_good_index_used AS full_scans
          FROM %1$s.events_statements_summary_by_user_by_event_name
         WHERE sum_timer_wait <> 0
         ORDER BY 1, sum_timer_wait DESC $$),
      ('host_summary_by_statement_type', ARRAY['events_statements_summary_by_host_by_event_name'], $$
        SELECT coalesce(host, 'background') AS host,
               regexp_replace(event_name, '^.*/', '') AS statement,
               count_star AS total,
               %2$s(sum_timer_wait) AS total_latency,
               %2$s(max_timer_wait) AS max_latency,
               %2$s(sum_lock_time) AS lock_latency,
               sum_rows_sent AS rows_sent,
               sum_rows_examined AS rows_examined,
               sum_rows_affected AS rows_affected,
               sum_no_index_used + sum_no_good_index_used AS full_scans
          FROM %1$s.events_statements_summary_by_host_by_event_name
         WHERE sum_timer_wait <> 0
         ORDER BY 1, sum_timer_wait DESC $$),
      -- sys.user_summary_by_file_io / host_summary_by_file_io: file io waits.
      ('user_summary_by_file_io', ARRAY['events_waits_summary_by_user_by_event_name'], $$
        SELECT coalesce("user", 'background') AS "user",
               sum(count_star) AS ios,
               %2$s(sum(sum_timer_wait)) AS io_latency
          FROM %1$s.events_waits_summary_by_user_by_event_name
         WHERE event_name LIKE 'wait/io/file/%%'
         GROUP BY 1
         ORDER BY sum(sum_timer_wait) DESC, 1 $$),
      ('host_summary_by_file_io', ARRAY['events_waits_summary_by_host_by_event_name'], $$
        SELECT coalesce(host, 'background') AS host,
               sum(count_star) AS ios,
               %2$s(sum(sum_timer_wait)) AS io_latency
          FROM %1$s.events_waits_summary_by_host_by_event_name
         WHERE event_name LIKE 'wait/io/file/%%'
         GROUP BY 1
         ORDER BY sum(sum_timer_wait) DESC, 1 $$)
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
                   format(v.body, quote_ident(source_schema), pico_formatter, 'pg_catalog.pg_size_pretty'));
    RETURN NEXT v.name::name;
    EXECUTE format('CREATE OR REPLACE VIEW %I.%I AS %s', target_schema, 'x$' || v.name,
                   format(v.body, quote_ident(source_schema), '', ''));
    RETURN NEXT ('x$' || v.name)::name;
  END LOOP;
END
$function$;

COMMENT ON FUNCTION perfschema_create_views(name, name) IS
  'creates sys-schema-like views (waits by latency, by class, by thread, latest waits; file and table io; statement analysis, 95th percentile, errors and warnings, waits by statement; lock waits and lock wait cycles; memory by thread, by class and in all; data lock waits (innodb_lock_waits); metadata lock waits (schema_table_lock_waits); user and host summaries, by statement type and by file io, when present) in target_schema over an imported performance_schema in source_schema';
