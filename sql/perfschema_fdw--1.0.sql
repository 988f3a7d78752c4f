/* sql/perfschema_fdw--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION perfschema_fdw" to load this file. \quit

CREATE FUNCTION perfschema_fdw_handler()
RETURNS fdw_handler
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

CREATE FUNCTION perfschema_fdw_validator(text[], oid)
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

CREATE FOREIGN DATA WRAPPER perfschema_fdw
  HANDLER perfschema_fdw_handler
  VALIDATOR perfschema_fdw_validator;

COMMENT ON FOREIGN DATA WRAPPER perfschema_fdw IS
  'performance_schema tables of a perfschema region: CREATE SERVER ... OPTIONS (region ''/path''), then IMPORT FOREIGN SCHEMA performance_schema';

-- format_pico_time: MySQL 8's FORMAT_PICO_TIME ('1.23 ms').
CREATE FUNCTION format_pico_time(bigint)
RETURNS text
AS 'MODULE_PATHNAME', 'perfschema_format_pico_time_int8'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION format_pico_time(double precision)
RETURNS text
AS 'MODULE_PATHNAME', 'perfschema_format_pico_time'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION format_pico_time(bigint) IS
  'picoseconds as text with a unit (ps, ns, us, ms, s, min, h, d), like MySQL''s FORMAT_PICO_TIME';
COMMENT ON FUNCTION format_pico_time(double precision) IS
  'picoseconds as text with a unit (ps, ns, us, ms, s, min, h, d), like MySQL''s FORMAT_PICO_TIME';

-- perfschema_create_views: views in the spirit of MySQL's sys schema over a schema
-- made by IMPORT FOREIGN SCHEMA performance_schema. Each view comes twice, as in
-- sys: <name> with times formatted by format_pico_time and sizes by pg_size_pretty,
-- and x$<name> with the raw picoseconds and bytes. A view whose tables are not in
-- the source schema is skipped with a notice. Returns the names of the views made.
CREATE FUNCTION perfschema_create_views(target_schema name, source_schema name)
RETURNS SETOF name
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
  -- In each body: %1$s = the source schema, %2$s = the time formatter, %3$s = the
  -- size formatter (both empty for the x$ views: "(expr)" is the raw value).
  pico_formatter text;
  v record;
  missing text[];
BEGIN
  IF to_regnamespace(quote_ident(source_schema)) IS NULL THEN
    RAISE EXCEPTION 'schema "%" does not exist', source_schema USING ERRCODE = 'invalid_schema_name';
  END IF;
  IF to_regnamespace(quote_ident(target_schema)) IS NULL THEN
    RAISE EXCEPTION 'schema "%" does not exist', target_schema USING ERRCODE = 'invalid_schema_name',
      HINT = 'Create it first with CREATE SCHEMA.';
  END IF;
  SELECT format('%I.format_pico_time', n.nspname) INTO pico_formatter
    FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
   WHERE e.extname = 'perfschema_fdw';

  FOR v IN
    SELECT * FROM (VALUES
      -- Which instruments cost the most wait time overall.
      ('waits_global_by_latency', ARRAY['events_waits_summary_global_by_event_name'], $$
        SELECT event_name AS events,
               count_star AS total,
               %2$s(sum_timer_wait) AS total_latency,
               %2$s(avg_timer_wait) AS avg_latency,
               %2$s(max_timer_wait) AS max_latency
          FROM %1$s.events_waits_summary_global_by_event_name
         WHERE event_name <> 'idle' AND sum_timer_wait > 0
         ORDER BY sum_timer_wait DESC, event_name $$),
      -- The same by class: the first three levels of the name (wait/synch/mutex).
      ('wait_classes_global_by_latency', ARRAY['events_waits_summary_global_by_event_name'], $$
        SELECT substring(event_name FROM '^[^/]*/[^/]*/[^/]*') AS event_class,
               sum(count_star) AS total,
               %2$s(sum(sum_timer_wait)) AS total_latency,
               %2$s(min(min_timer_wait)) AS min_latency,
               %2$s((sum(sum_timer_wait) / sum(count_star))::bigint) AS avg_latency,
               %2$s(max(max_timer_wait)) AS max_latency
          FROM %1$s.events_waits_summary_global_by_event_name
         WHERE event_name <> 'idle' AND sum_timer_wait > 0
         GROUP BY 1
         ORDER BY sum(sum_timer_wait) DESC, 1 $$),
      -- Which threads wait, and on what.
      ('waits_by_thread_by_latency',
       ARRAY['events_waits_summary_by_thread_by_event_name', 'threads'], $$
        SELECT w.thread_id,
               t.name AS thread,
               w.event_name AS event,
               w.count_star AS total,
               %2$s(w.sum_timer_wait) AS total_latency,
               %2$s(w.avg_timer_wait) AS avg_latency,
               %2$s(w.max_timer_wait) AS max_latency
          FROM %1$s.events_waits_summary_by_thread_by_event_name w
          LEFT JOIN %1$s.threads t ON t.thread_id = w.thread_id
         WHERE w.sum_timer_wait > 0
         ORDER BY w.sum_timer_wait DESC, w.thread_id, w.event_name $$),
      -- The latest waits of every thread: its history and a wait still running.
      ('latest_waits_by_thread',
       ARRAY['events_waits_current', 'events_waits_history', 'threads'], $$
        SELECT w.thread_id,
               t.name AS thread,
               w.event_id,
               w.event_name AS event,
               CASE WHEN w.end_event_id IS NULL THEN 'running' ELSE 'completed' END AS state,
               w.source,
               w.operation,
               %2$s(w.timer_wait) AS latency,
               w.object_instance_begin
          FROM (SELECT thread_id, event_id, end_event_id, event_name, source, operation,
                       timer_wait, object_instance_begin
                  FROM %1$s.events_waits_history
                UNION
                SELECT thread_id, event_id, end_event_id, event_name, source, operation,
                       timer_wait, object_instance_begin
                  FROM %1$s.events_waits_current) w
          LEFT JOIN %1$s.threads t ON t.thread_id = w.thread_id
         ORDER BY w.thread_id, w.event_id DESC $$),
      -- File io per file, by latency and by bytes.
      ('io_global_by_file_by_latency', ARRAY['file_summary_by_instance'], $$
        SELECT file_name AS file,
               count_star AS total,
               %2$s(sum_timer_wait) AS total_latency,
               count_read,
               %2$s(sum_timer_read) AS read_latency,
               count_write,
               %2$s(sum_timer_write) AS write_latency,
               count_misc,
               %2$s(sum_timer_misc) AS misc_latency
          FROM %1$s.file_summary_by_instance
         ORDER BY sum_timer_wait DESC, file_name $$),
      ('io_global_by_file_by_bytes', ARRAY['file_summary_by_instance'], $$
        SELECT file_name AS file,
               count_read,
               %3$s(sum_number_of_bytes_read) AS total_read,
               %3$s(CASE WHEN count_read = 0 THEN 0
                         ELSE sum_number_of_bytes_read / count_read END) AS avg_read,
               count_write,
               %3$s(sum_number_of_bytes_write) AS total_written,
               %3$s(CASE WHEN count_write = 0 THEN 0
                         ELSE sum_number_of_bytes_write / count_write END) AS avg_write,
               %3$s(sum_number_of_bytes_read + sum_number_of_bytes_write) AS total,
               round(100.0 * sum_number_of_bytes_write
                     / nullif(sum_number_of_bytes_read + sum_number_of_bytes_write, 0), 2) AS write_pct
          FROM %1$s.file_summary_by_instance
         ORDER BY sum_number_of_bytes_read + sum_number_of_bytes_write DESC, file_name $$),
      -- Table io per table (sys's schema_table_statistics without its file io part).
      ('schema_table_statistics', ARRAY['table_io_waits_summary_by_table'], $$
        SELECT object_schema AS table_schema,
               object_name AS table_name,
               %2$s(sum_timer_wait) AS total_latency,
               count_fetch AS rows_fetched,
               %2$s(sum_timer_fetch) AS fetch_latency,
               count_insert AS rows_inserted,
               %2$s(sum_timer_insert) AS insert_latency,
               count_update AS rows_updated,
               %2$s(sum_timer_update) AS update_latency,
               count_delete AS rows_deleted,
               %2$s(sum_timer_delete) AS delete_latency
          FROM %1$s.table_io_waits_summary_by_table
         ORDER BY sum_timer_wait DESC, object_schema, object_name $$),
      -- sys.statement_analysis: every kind of statement (digest) by total latency.
      ('statement_analysis', ARRAY['events_statements_summary_by_digest'], $$
        SELECT digest_text AS query,
               schema_name AS db,
               CASE WHEN sum_no_good_index_used > 0 OR sum_no_index_used > 0 THEN '*' ELSE '' END AS full_scan,
               count_star AS exec_count,
               sum_errors AS err_count,
               sum_warnings AS warn_count,
               %2$s(sum_timer_wait) AS total_latency,
               %2$s(max_timer_wait) AS max_latency,
               %2$s(avg_timer_wait) AS avg_latency,
               %2$s(sum_lock_time) AS lock_latency,
               %2$s(sum_cpu_time) AS cpu_latency,
               sum_rows_sent AS rows_sent,
               round(coalesce(sum_rows_sent::numeric / nullif(count_star, 0), 0)) AS rows_sent_avg,
               sum_rows_examined AS rows_examined,
               round(coalesce(sum_rows_examined::numeric / nullif(count_star, 0), 0)) AS rows_examined_avg,
               sum_rows_affected AS rows_affected,
               round(coalesce(sum_rows_affected::numeric / nullif(count_star, 0), 0)) AS rows_affected_avg,
               sum_created_tmp_tables AS tmp_tables,
               sum_created_tmp_disk_tables AS tmp_disk_tables,
               sum_sort_rows AS rows_sorted,
               sum_sort_merge_passes AS sort_merge_passes,
               %2$s(quantile_95) AS p95_latency,
               %2$s(quantile_99) AS p99_latency,
               digest,
               first_seen,
               last_seen
          FROM %1$s.events_statements_summary_by_digest
         ORDER BY sum_timer_wait DESC, digest $$),
      -- sys.statements_with_runtimes_in_95th_percentile: the digests whose average
      -- latency is in the slowest 5% of all digests' averages (as sys computes it).
      ('statements_with_runtimes_in_95th_percentile', ARRAY['events_statements_summary_by_digest'], $$
        SELECT digest_text AS query,
               schema_name AS db,
               CASE WHEN sum_no_good_index_used > 0 OR sum_no_index_used > 0 THEN '*' ELSE '' END AS full_scan,
               count_star AS exec_count,
               sum_errors AS err_count,
               sum_warnings AS warn_count,
               %2$s(sum_timer_wait) AS total_latency,
               %2$s(max_timer_wait) AS max_latency,
               %2$s(avg_timer_wait) AS avg_latency,
               sum_rows_sent AS rows_sent,
               round(coalesce(sum_rows_sent::numeric / nullif(count_star, 0), 0)) AS rows_sent_avg,
               sum_rows_examined AS rows_examined,
               round(coalesce(sum_rows_examined::numeric / nullif(count_star, 0), 0)) AS rows_examined_avg,
               first_seen,
               last_seen,
               digest
          FROM %1$s.events_statements_summary_by_digest
         WHERE avg_timer_wait >= (SELECT percentile_disc(0.95) WITHIN GROUP (ORDER BY avg_timer_wait)
                                    FROM %1$s.events_statements_summary_by_digest)
         ORDER BY avg_timer_wait DESC, digest $$),
      -- sys.statements_with_errors_or_warnings.
      ('statements_with_errors_or_warnings', ARRAY['events_statements_summary_by_digest'], $$
        SELECT digest_text AS query,
               schema_name AS db,
               count_star AS exec_count,
               sum_errors AS errors,
               round(100.0 * sum_errors / nullif(count_star, 0), 4) AS error_pct,
               sum_warnings AS warnings,
               round(100.0 * sum_warnings / nullif(count_star, 0), 4) AS warning_pct,
               first_seen,
               last_seen,
               digest
          FROM %1$s.events_statements_summary_by_digest
         WHERE sum_errors > 0 OR sum_warnings > 0
         ORDER BY sum_errors DESC, sum_warnings DESC, digest $$),
      -- Beyond sys: which waits each kind of statement (digest) waited on. A wait
      -- belongs to the statement it nests in, directly or through a stage; built
      -- from the history tables, so it covers the events they still hold.
      ('waits_by_statement',
       ARRAY['events_waits_history_long', 'events_waits_history', 'events_stages_history_long',
             'events_stages_history', 'events_statements_history_long', 'events_statements_history',
             'events_statements_current'], $$
        WITH stmt AS (
               SELECT thread_id, event_id, event_name, digest, digest_text FROM %1$s.events_statements_history_long
               UNION SELECT thread_id, event_id, event_name, digest, digest_text FROM %1$s.events_statements_history
               UNION SELECT thread_id, event_id, event_name, digest, digest_text FROM %1$s.events_statements_current),
             stage AS (
               SELECT thread_id, event_id, nesting_event_id FROM %1$s.events_stages_history_long
               UNION SELECT thread_id, event_id, nesting_event_id FROM %1$s.events_stages_history),
             waits AS (
               SELECT thread_id, event_id, event_name, timer_wait, nesting_event_id, nesting_event_type
                 FROM %1$s.events_waits_history_long
               UNION SELECT thread_id, event_id, event_name, timer_wait, nesting_event_id, nesting_event_type
                 FROM %1$s.events_waits_history)
        SELECT s.event_name AS statement,
               s.digest_text AS query,
               w.event_name AS event,
               count(*) AS total,
               %2$s(sum(w.timer_wait)::bigint) AS total_latency,
               %2$s(max(w.timer_wait)) AS max_latency,
               s.digest
          FROM waits w
          LEFT JOIN stage g ON w.nesting_event_type = 'STAGE' AND g.thread_id = w.thread_id
                           AND g.event_id = w.nesting_event_id
          JOIN stmt s ON s.thread_id = w.thread_id
                     AND s.event_id = CASE w.nesting_event_type WHEN 'STATEMENT' THEN w.nesting_event_id
                                                                WHEN 'STAGE' THEN g.nesting_event_id END
         GROUP BY s.event_name, s.digest_text, s.digest, w.event_name
         ORDER BY sum(w.timer_wait) DESC NULLS LAST, 1, 3 $$)
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
  'creates sys-schema-like views (waits by latency, by class, by thread, latest waits; file and table io; statement analysis, 95th percentile, errors and warnings, waits by statement, when present) in target_schema over an imported performance_schema in source_schema';
