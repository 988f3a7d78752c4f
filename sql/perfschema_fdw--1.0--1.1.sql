/* sql/perfschema_fdw--1.0--1.1.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION perfschema_fdw UPDATE TO '1.1'" to load this file. \quit

-- 1.1: perfschema_create_views also makes lock_waits and lock_wait_cycles (who
-- blocks whom); snapshots (perfschema_snapshot, perfschema_create_delta_views,
-- perfschema_snapshot_retention) and flame graphs (perfschema_folded_waits).
-- Sums of times are numeric since region layout 4: foreign tables imported
-- before should be imported again (DROP SCHEMA ... CASCADE, IMPORT FOREIGN SCHEMA).

-- perfschema_create_views: views in the spirit of MySQL's sys schema over a schema
-- made by IMPORT FOREIGN SCHEMA performance_schema. Each view comes twice, as in
-- sys: <name> with times formatted by format_pico_time and sizes by pg_size_pretty,
-- and x$<name> with the raw picoseconds and bytes. A view whose tables are not in
-- the source schema is skipped with a notice. Returns the names of the views made.
CREATE OR REPLACE FUNCTION perfschema_create_views(target_schema name, source_schema name)
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
         ORDER BY sum(w.timer_wait) DESC NULLS LAST, 1, 3 $$),
      -- Who blocks whom (the shape of sys.innodb_lock_waits, for every instrumented
      -- mutex and rwlock): each lock wait running now, the thread it waits for, what
      -- that thread is doing now and how long it has held the lock. Empty when the
      -- process is not running (its last waits are not waits any more).
      ('lock_waits',
       ARRAY['events_waits_current', 'events_waits_history', 'events_waits_history_long',
             'events_stages_current', 'events_statements_current', 'threads', 'status'], $$
        WITH running AS MATERIALIZED (
               SELECT w.*
                 FROM %1$s.events_waits_current w
                WHERE w.end_event_id IS NULL
                  AND EXISTS (SELECT FROM %1$s.status
                               WHERE variable_name = 'provider_alive' AND variable_value = 1)),
             innermost_wait AS (
               SELECT DISTINCT ON (thread_id) thread_id, event_name, source, timer_wait
                 FROM running ORDER BY thread_id, event_id DESC),
             stage AS (
               SELECT DISTINCT ON (thread_id) thread_id, event_name
                 FROM %1$s.events_stages_current WHERE end_event_id IS NULL
                ORDER BY thread_id, event_id DESC),
             statement AS (
               SELECT DISTINCT ON (thread_id) thread_id, sql_text
                 FROM %1$s.events_statements_current WHERE end_event_id IS NULL
                ORDER BY thread_id, event_id DESC),
             acquired AS (
               SELECT thread_id, event_id, source, timer_end FROM %1$s.events_waits_history
               UNION SELECT thread_id, event_id, source, timer_end FROM %1$s.events_waits_history_long
               UNION SELECT thread_id, event_id, source, timer_end FROM %1$s.events_waits_current
                      WHERE end_event_id IS NOT NULL)
        SELECT %2$s(w.timer_wait) AS wait_age,
               w.event_name AS locked_lock,
               w.object_instance_begin AS locked_instance,
               w.operation AS waiting_lock_mode,
               w.thread_id AS waiting_thread_id,
               wt.name AS waiting_thread,
               w.event_id AS waiting_event_id,
               w.source AS waiting_source,
               ws.event_name AS waiting_stage,
               wq.sql_text AS waiting_statement,
               w.blocking_thread_id,
               bt.name AS blocking_thread,
               w.blocking_event_id,
               a.source AS blocking_lock_source,
               %2$s(w.timer_end - a.timer_end) AS blocking_lock_held,
               bw.event_name AS blocking_current_wait,
               %2$s(bw.timer_wait) AS blocking_current_wait_age,
               bs.event_name AS blocking_stage,
               bq.sql_text AS blocking_statement
          FROM running w
          LEFT JOIN %1$s.threads wt ON wt.thread_id = w.thread_id
          LEFT JOIN stage ws ON ws.thread_id = w.thread_id
          LEFT JOIN statement wq ON wq.thread_id = w.thread_id
          LEFT JOIN %1$s.threads bt ON bt.thread_id = w.blocking_thread_id
          LEFT JOIN acquired a ON a.thread_id = w.blocking_thread_id AND a.event_id = w.blocking_event_id
          LEFT JOIN innermost_wait bw ON bw.thread_id = w.blocking_thread_id
          LEFT JOIN stage bs ON bs.thread_id = w.blocking_thread_id
          LEFT JOIN statement bq ON bq.thread_id = w.blocking_thread_id
         WHERE w.operation IN ('lock', 'read_lock', 'write_lock')
         ORDER BY w.timer_wait DESC, w.thread_id $$),
      -- Deadlocks: cycles in the wait-for graph of the running lock waits (each
      -- waiting thread points to the holder its wait names), by a recursive walk
      -- from every waiter. One row per cycle, listed from its smallest thread id,
      -- for as long as it lasts. A writer blocked by readers names no holder, so a
      -- cycle through it is not seen.
      ('lock_wait_cycles', ARRAY['events_waits_current', 'threads', 'status'], $$
        WITH RECURSIVE edges AS MATERIALIZED (
               SELECT thread_id AS waiter, blocking_thread_id AS holder, event_name, object_instance_begin,
                      source, timer_wait
                 FROM %1$s.events_waits_current
                WHERE end_event_id IS NULL AND operation IN ('lock', 'read_lock', 'write_lock')
                  AND blocking_thread_id IS NOT NULL
                  AND EXISTS (SELECT FROM %1$s.status
                               WHERE variable_name = 'provider_alive' AND variable_value = 1)),
             walk AS (
               SELECT waiter AS first, holder AS next, ARRAY[waiter] AS threads, ARRAY[event_name] AS locks,
                      ARRAY[object_instance_begin] AS instances, ARRAY[source] AS sources, timer_wait AS age
                 FROM edges
               UNION ALL
               SELECT w.first, e.holder, w.threads || e.waiter, w.locks || e.event_name,
                      w.instances || e.object_instance_begin, w.sources || e.source, least(w.age, e.timer_wait)
                 FROM walk w JOIN edges e ON e.waiter = w.next
                WHERE w.next <> w.first AND e.waiter <> ALL (w.threads))
        SELECT cardinality(c.threads) AS threads_in_cycle,
               c.threads AS thread_ids,
               (SELECT array_agg(coalesce(t.name, '?') ORDER BY u.n)
                  FROM unnest(c.threads) WITH ORDINALITY AS u(id, n)
                  LEFT JOIN %1$s.threads t ON t.thread_id = u.id) AS thread_names,
               c.locks AS waiting_for_locks,
               c.instances AS waiting_for_instances,
               c.sources AS waiting_sources,
               %2$s(c.age) AS cycle_age
          FROM walk c
         WHERE c.next = c.first AND c.first = (SELECT min(x) FROM unnest(c.threads) AS x)
         ORDER BY c.age DESC, c.threads $$)
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
  'creates sys-schema-like views (waits by latency, by class, by thread, latest waits; file and table io; statement analysis, 95th percentile, errors and warnings, waits by statement; lock waits and lock wait cycles, when present) in target_schema over an imported performance_schema in source_schema';

-- Snapshots: the summary tables of an imported performance_schema copied into
-- ordinary tables of history_schema (made on first use), one consistent read per
-- table, with a snapshot id and time; views waits_delta and file_io_delta give
-- what changed between consecutive snapshots of the same foreign schema, per
-- second. A counter that went down (TRUNCATE) or a region of another process
-- (program restarted: pid or creation time changed) starts a new series: that
-- interval's delta is the value counted since, never negative. Schedule it with
-- pg_cron: SELECT cron.schedule('perfschema', '* * * * *',
--   $$SELECT perfschema_snapshot('ps')$$);
CREATE FUNCTION perfschema_snapshot(foreign_schema name, history_schema name DEFAULT 'perfschema_history')
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
SET client_min_messages = warning  -- not the "already exists, skipping" of every later snapshot
AS $function$
DECLARE
  summary_tables CONSTANT text[] := ARRAY[
    'events_waits_summary_global_by_event_name', 'events_waits_summary_by_instance',
    'file_summary_by_event_name', 'file_summary_by_instance',
    'table_io_waits_summary_by_table', 'table_io_waits_summary_by_index_usage',
    'events_stages_summary_global_by_event_name', 'events_statements_summary_global_by_event_name',
    'events_statements_summary_by_digest', 'events_transactions_summary_global_by_event_name'];
  t text;
  id bigint;
  region_pid bigint;
  region_created bigint;
  ext_schema name;
BEGIN
  IF to_regnamespace(quote_ident(foreign_schema)) IS NULL THEN
    RAISE EXCEPTION 'schema "%" does not exist', foreign_schema USING ERRCODE = 'invalid_schema_name',
      HINT = 'Import the perfschema tables first with IMPORT FOREIGN SCHEMA performance_schema.';
  END IF;
  IF to_regclass(format('%I.status', foreign_schema)) IS NULL THEN
    RAISE EXCEPTION 'schema "%" has no perfschema tables', foreign_schema USING ERRCODE = 'undefined_table',
      HINT = 'Import them with IMPORT FOREIGN SCHEMA performance_schema.';
  END IF;
  -- One snapshot at a time per history schema (pg_cron may overlap a slow one).
  PERFORM pg_advisory_xact_lock(hashtext('perfschema_snapshot'), hashtext(history_schema));
  EXECUTE format('CREATE SCHEMA IF NOT EXISTS %I', history_schema);
  EXECUTE format($$CREATE TABLE IF NOT EXISTS %I.snapshots (
                     snapshot_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                     taken_at timestamptz NOT NULL DEFAULT clock_timestamp(),
                     foreign_schema name NOT NULL,
                     pid bigint,
                     creation_time_ns bigint)$$, history_schema);
  EXECUTE format($$SELECT max(variable_value) FILTER (WHERE variable_name = 'pid'),
                          max(variable_value) FILTER (WHERE variable_name = 'creation_time_ns')
                     FROM %I.status$$, foreign_schema)
     INTO region_pid, region_created;
  EXECUTE format('INSERT INTO %I.snapshots (foreign_schema, pid, creation_time_ns) VALUES ($1, $2, $3)
                  RETURNING snapshot_id', history_schema)
     INTO id USING foreign_schema, region_pid, region_created;
  FOREACH t IN ARRAY summary_tables LOOP
    CONTINUE WHEN to_regclass(format('%I.%I', foreign_schema, t)) IS NULL;
    EXECUTE format($$CREATE TABLE IF NOT EXISTS %1$I.%2$I (
                       snapshot_id bigint NOT NULL REFERENCES %1$I.snapshots ON DELETE CASCADE,
                       LIKE %3$I.%2$I)$$, history_schema, t, foreign_schema);
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON %I.%I (snapshot_id)', t || '_snapshot', history_schema, t);
    EXECUTE format('INSERT INTO %I.%I SELECT $1, * FROM %I.%I', history_schema, t, foreign_schema, t) USING id;
  END LOOP;
  SELECT n.nspname INTO ext_schema
    FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
   WHERE e.extname = 'perfschema_fdw';
  EXECUTE format('SELECT %I.perfschema_create_delta_views($1)', ext_schema) USING history_schema;
  RETURN id;
END
$function$;

COMMENT ON FUNCTION perfschema_snapshot(name, name) IS
  'copies the summary tables of an imported performance_schema into history_schema (one consistent read per table) and returns the snapshot id; views waits_delta and file_io_delta there give per-interval deltas and rates';

-- The delta views of a history schema (made by perfschema_snapshot; rerun after a
-- snapshot adds tables).
CREATE FUNCTION perfschema_create_delta_views(history_schema name)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
  -- Consecutive snapshots of one foreign schema, and whether the region is the
  -- same process's (a restart starts every series anew).
  intervals CONSTANT text := format($$
    SELECT s.snapshot_id, s.foreign_schema, p.taken_at AS interval_start, s.taken_at AS interval_end,
           extract(epoch FROM s.taken_at - p.taken_at)::double precision AS seconds, p.snapshot_id AS prev_id,
           (s.pid IS DISTINCT FROM p.pid OR s.creation_time_ns IS DISTINCT FROM p.creation_time_ns) AS restarted
      FROM (SELECT *, lag(snapshot_id) OVER (PARTITION BY foreign_schema ORDER BY snapshot_id) AS prev
              FROM %1$I.snapshots) s
      JOIN %1$I.snapshots p ON p.snapshot_id = s.prev$$, history_schema);
BEGIN
  IF to_regclass(format('%I.events_waits_summary_global_by_event_name', history_schema)) IS NOT NULL THEN
    EXECUTE format($$CREATE OR REPLACE VIEW %1$I.waits_delta AS
      SELECT i.snapshot_id, i.foreign_schema, i.interval_start, i.interval_end, i.seconds, c.event_name,
             d.count_star, d.sum_timer_wait,
             d.count_star / nullif(i.seconds, 0) AS waits_per_second,
             d.sum_timer_wait / 1e12 / nullif(i.seconds, 0) AS seconds_waited_per_second,
             r.new_series
        FROM (%2$s) i
        JOIN %1$I.events_waits_summary_global_by_event_name c ON c.snapshot_id = i.snapshot_id
        LEFT JOIN %1$I.events_waits_summary_global_by_event_name p
               ON p.snapshot_id = i.prev_id AND p.event_name = c.event_name
        CROSS JOIN LATERAL (SELECT p.event_name IS NULL OR i.restarted OR c.count_star < p.count_star
                                   OR c.sum_timer_wait < p.sum_timer_wait AS new_series) r
        CROSS JOIN LATERAL (SELECT CASE WHEN r.new_series THEN c.count_star
                                        ELSE c.count_star - p.count_star END AS count_star,
                                   CASE WHEN r.new_series THEN c.sum_timer_wait
                                        ELSE c.sum_timer_wait - p.sum_timer_wait END AS sum_timer_wait) d$$,
      history_schema, intervals);
  END IF;
  IF to_regclass(format('%I.file_summary_by_event_name', history_schema)) IS NOT NULL THEN
    EXECUTE format($$CREATE OR REPLACE VIEW %1$I.file_io_delta AS
      SELECT i.snapshot_id, i.foreign_schema, i.interval_start, i.interval_end, i.seconds, c.event_name,
             d.count_read, d.bytes_read, d.count_write, d.bytes_write, d.count_misc, d.sum_timer_wait,
             d.bytes_read / nullif(i.seconds, 0) AS bytes_read_per_second,
             d.bytes_write / nullif(i.seconds, 0) AS bytes_written_per_second,
             (d.count_read + d.count_write + d.count_misc) / nullif(i.seconds, 0) AS operations_per_second,
             d.sum_timer_wait / 1e12 / nullif(i.seconds, 0) AS seconds_waited_per_second,
             r.new_series
        FROM (%2$s) i
        JOIN %1$I.file_summary_by_event_name c ON c.snapshot_id = i.snapshot_id
        LEFT JOIN %1$I.file_summary_by_event_name p ON p.snapshot_id = i.prev_id AND p.event_name = c.event_name
        CROSS JOIN LATERAL (SELECT p.event_name IS NULL OR i.restarted
                                   OR c.count_read < p.count_read OR c.count_write < p.count_write
                                   OR c.count_misc < p.count_misc OR c.sum_timer_wait < p.sum_timer_wait
                                   OR c.sum_number_of_bytes_read < p.sum_number_of_bytes_read
                                   OR c.sum_number_of_bytes_write < p.sum_number_of_bytes_write AS new_series) r
        CROSS JOIN LATERAL (SELECT
            CASE WHEN r.new_series THEN c.count_read ELSE c.count_read - p.count_read END AS count_read,
            CASE WHEN r.new_series THEN c.sum_number_of_bytes_read
                 ELSE c.sum_number_of_bytes_read - p.sum_number_of_bytes_read END AS bytes_read,
            CASE WHEN r.new_series THEN c.count_write ELSE c.count_write - p.count_write END AS count_write,
            CASE WHEN r.new_series THEN c.sum_number_of_bytes_write
                 ELSE c.sum_number_of_bytes_write - p.sum_number_of_bytes_write END AS bytes_write,
            CASE WHEN r.new_series THEN c.count_misc ELSE c.count_misc - p.count_misc END AS count_misc,
            CASE WHEN r.new_series THEN c.sum_timer_wait
                 ELSE c.sum_timer_wait - p.sum_timer_wait END AS sum_timer_wait) d$$,
      history_schema, intervals);
  END IF;
END
$function$;

COMMENT ON FUNCTION perfschema_create_delta_views(name) IS
  'creates the views waits_delta and file_io_delta of a history schema filled by perfschema_snapshot';

-- Drops the snapshots older than keep (and their rows); returns how many. keep
-- must be positive: zero or less would drop every snapshot.
CREATE FUNCTION perfschema_snapshot_retention(keep interval, history_schema name DEFAULT 'perfschema_history')
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
  dropped bigint;
BEGIN
  IF keep <= interval '0' THEN
    RAISE EXCEPTION 'retention interval must be positive: %', keep
      USING ERRCODE = 'invalid_parameter_value',
            DETAIL = 'Snapshots older than the interval are dropped: this one would drop every snapshot.',
            HINT = format('Give how long to keep the snapshots, such as ''7 days''; to drop them all, DELETE FROM %I.snapshots.',
                          history_schema);
  END IF;
  IF to_regclass(format('%I.snapshots', history_schema)) IS NULL THEN
    RETURN 0;
  END IF;
  PERFORM pg_advisory_xact_lock(hashtext('perfschema_snapshot'), hashtext(history_schema));
  EXECUTE format('WITH d AS (DELETE FROM %I.snapshots WHERE taken_at < clock_timestamp() - $1 RETURNING 1)
                  SELECT count(*) FROM d', history_schema)
     INTO dropped USING keep;
  RETURN dropped;
END
$function$;

COMMENT ON FUNCTION perfschema_snapshot_retention(interval, name) IS
  'deletes the snapshots of history_schema older than keep, with their rows; returns how many';

-- Folded stacks of waiting time for flame graphs (flamegraph.pl, speedscope,
-- build/tools/pfs_flamegraph): one row per distinct stack
-- "thread class;statement;stage;wait event;source" (levels a wait does not have
-- are left out) with the picoseconds its waits in events_waits_history_long took.
-- The lines flame graph tools read: SELECT stack || ' ' || picoseconds FROM ...
-- A wait inside another wait is in the stage and statement of its outermost wait.
-- A wait whose stage or statement (or outer wait) the histories no longer hold
-- (history_long keeps more waits than stages, and more stages than statements) is
-- left out, so that a code path never shows at two depths; a notice says how many
-- were.
CREATE FUNCTION perfschema_folded_waits(foreign_schema name)
RETURNS TABLE (stack text, picoseconds numeric)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
  has_work boolean;
  outer_waits text;
  orphan boolean;
  waits bigint;
  all_waits bigint := 0;
  left_out bigint := 0;
  left_out_ps numeric := 0;
BEGIN
  IF to_regclass(format('%I.events_waits_history_long', foreign_schema)) IS NULL THEN
    RAISE EXCEPTION 'schema "%" has no table events_waits_history_long', foreign_schema
      USING ERRCODE = 'undefined_table', HINT = 'Import the perfschema tables with IMPORT FOREIGN SCHEMA performance_schema.';
  END IF;
  SELECT count(*) = 6 INTO has_work
    FROM unnest(ARRAY['events_stages_history_long', 'events_stages_history', 'events_stages_current',
                      'events_statements_history_long', 'events_statements_history',
                      'events_statements_current']) AS t
   WHERE to_regclass(format('%I.%I', foreign_schema, t)) IS NOT NULL;
  -- The waits an outer wait is looked up in (the tables there are).
  SELECT string_agg(format('SELECT thread_id, event_id, nesting_event_id, nesting_event_type FROM %I.%I',
                           foreign_schema, t), ' UNION ALL ')
    INTO outer_waits
    FROM unnest(ARRAY['events_waits_history_long', 'events_waits_history', 'events_waits_current']) AS t
   WHERE to_regclass(format('%I.%I', foreign_schema, t)) IS NOT NULL;
  -- ';' separates frames: a name that holds one shows ':' instead. orphan: the
  -- wait's outer wait, its stage, or the statement of its stage or its own, is gone.
  FOR stack, picoseconds, waits, orphan IN EXECUTE format($$
    SELECT concat_ws(';', replace(coalesce(t.name, 'thread/unknown'), ';', ':'),
                          replace(st.event_name, ';', ':'), replace(sg.event_name, ';', ':'),
                          replace(w.event_name, ';', ':'), replace(w.source, ';', ':')),
           sum(w.timer_wait)::numeric, count(*), %3$s
      FROM %4$s w
      LEFT JOIN %1$I.threads t ON t.thread_id = w.thread_id
      %2$s
     WHERE w.timer_wait IS NOT NULL
     GROUP BY 1, 4
     ORDER BY 1$$, foreign_schema,
    -- A stage or statement is looked up in its current, history and history_long
    -- tables: the long history of waits may outlast that of stages.
    CASE WHEN has_work THEN format($$
      LEFT JOIN (SELECT DISTINCT ON (thread_id, event_id) thread_id, event_id, event_name,
                        nesting_event_type, nesting_event_id
                   FROM (SELECT thread_id, event_id, event_name, nesting_event_type, nesting_event_id
                           FROM %1$I.events_stages_history_long
                         UNION ALL SELECT thread_id, event_id, event_name, nesting_event_type, nesting_event_id
                           FROM %1$I.events_stages_history
                         UNION ALL SELECT thread_id, event_id, event_name, nesting_event_type, nesting_event_id
                           FROM %1$I.events_stages_current) a) sg
             ON w.nesting_event_type = 'STAGE' AND sg.thread_id = w.thread_id AND sg.event_id = w.nesting_event_id
      LEFT JOIN (SELECT DISTINCT ON (thread_id, event_id) thread_id, event_id, event_name
                   FROM (SELECT thread_id, event_id, event_name FROM %1$I.events_statements_history_long
                         UNION ALL SELECT thread_id, event_id, event_name FROM %1$I.events_statements_history
                         UNION ALL SELECT thread_id, event_id, event_name FROM %1$I.events_statements_current) a) st
             ON st.thread_id = w.thread_id
            AND st.event_id = CASE WHEN w.nesting_event_type = 'STATEMENT' THEN w.nesting_event_id
                                   WHEN sg.nesting_event_type = 'STATEMENT' THEN sg.nesting_event_id END$$,
      foreign_schema)
    ELSE $$CROSS JOIN (SELECT NULL::text AS event_name) sg CROSS JOIN (SELECT NULL::text AS event_name) st$$ END,
    CASE WHEN has_work THEN $$coalesce(w.nesting_event_type = 'WAIT', false)
                             OR coalesce(w.nesting_event_type = 'STAGE' AND sg.event_id IS NULL, false)
                             OR (coalesce(w.nesting_event_type = 'STATEMENT'
                                          OR sg.nesting_event_type = 'STATEMENT', false)
                                 AND st.event_id IS NULL)$$
         ELSE 'false' END,
    -- The waits with the nesting of their outermost wait (up: one row per step
    -- out; the last step's nesting is WAIT when an outer wait is gone).
    CASE WHEN has_work THEN format($$(
      WITH RECURSIVE outer_wait AS (
        SELECT DISTINCT ON (thread_id, event_id) thread_id, event_id, nesting_event_id, nesting_event_type
          FROM (%2$s) a),
      up AS (
        SELECT l.thread_id, l.event_id, l.event_name, l.source, l.timer_wait, l.nesting_event_id,
               l.nesting_event_type, 0 AS steps
          FROM %1$I.events_waits_history_long l
         WHERE l.timer_wait IS NOT NULL
        UNION ALL
        SELECT up.thread_id, up.event_id, up.event_name, up.source, up.timer_wait, o.nesting_event_id,
               o.nesting_event_type, up.steps + 1
          FROM up JOIN outer_wait o ON o.thread_id = up.thread_id AND o.event_id = up.nesting_event_id
         WHERE up.nesting_event_type = 'WAIT' AND up.steps < 100)
      SELECT DISTINCT ON (thread_id, event_id) * FROM up ORDER BY thread_id, event_id, steps DESC)$$,
      foreign_schema, outer_waits)
    ELSE format('%I.events_waits_history_long', foreign_schema) END)
  LOOP
    all_waits := all_waits + waits;
    IF orphan THEN
      left_out := left_out + waits;
      left_out_ps := left_out_ps + picoseconds;
    ELSE
      RETURN NEXT;
    END IF;
  END LOOP;
  IF left_out > 0 THEN
    RAISE NOTICE 'left out % of % waits: their stage, statement or outer wait is no longer in the history', left_out, all_waits
      USING DETAIL = format('The histories keep fewer stages and statements than waits; the waits left out took %s picoseconds.',
                            left_out_ps),
            HINT = 'Larger PFS_STAGES_HISTORY_LONG_SIZE and PFS_STATEMENTS_HISTORY_LONG_SIZE keep more of them.';
  END IF;
END
$function$;

COMMENT ON FUNCTION perfschema_folded_waits(name) IS
  'folded stacks (thread class;statement;stage;wait event;source) of the waits in events_waits_history_long with their picoseconds, for flame graphs';
