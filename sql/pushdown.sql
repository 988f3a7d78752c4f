--
-- Conditions the reader evaluates itself (pushdown.c): what EXPLAIN shows as
-- "Reader Filter", which conditions stay with the executor, parameterized
-- scans for joins, and the same rows with pushdown on and off
-- (perfschema_fdw.pushdown).
--
-- A region of 5,000 generated waits: threads 1..3 in turn, five classes in
-- turn (one wait in five reads wait/io/file/app/log).
\! build/tools/pfs_fixture --mode=0666 --history-long-rows=5000 /tmp/perfschema_fdw_regress/pushdown.region
CREATE SERVER pushdown FOREIGN DATA WRAPPER perfschema_fdw
  OPTIONS (region '/tmp/perfschema_fdw_regress/pushdown.region');
CREATE SCHEMA pd;
IMPORT FOREIGN SCHEMA performance_schema
  LIMIT TO (events_waits_history_long, threads, setup_instruments)
  FROM SERVER pushdown INTO pd;

-- every kind of condition the reader tests, and one it does not
EXPLAIN (COSTS OFF) SELECT * FROM pd.events_waits_history_long WHERE thread_id = 2;
EXPLAIN (COSTS OFF) SELECT * FROM pd.events_waits_history_long
 WHERE event_id BETWEEN 10 AND 20 AND thread_id IN (1, 3) AND object_name IS NULL;
EXPLAIN (COSTS OFF) SELECT * FROM pd.events_waits_history_long
 WHERE event_name = ANY (ARRAY['wait/io/file/app/log', 'wait/synch/mutex/app/cache_lock'])
   AND source IS NOT NULL AND number_of_bytes > 100;
-- LIKE: a literal prefix and '%' is exact; more pattern after it is checked again
EXPLAIN (COSTS OFF) SELECT * FROM pd.events_waits_history_long WHERE event_name LIKE 'wait/io/%';
EXPLAIN (COSTS OFF) SELECT * FROM pd.events_waits_history_long WHERE event_name LIKE 'wait/synch/%_lock';
-- not pushed: a function of the column, a comparison of text by order, OR,
-- a volatile operand, ILIKE
EXPLAIN (COSTS OFF) SELECT * FROM pd.events_waits_history_long
 WHERE thread_id + 1 = 3 AND event_name > 'wait/io' AND (thread_id = 1 OR event_id = 5)
   AND event_id < (random() * 10)::bigint AND event_name ILIKE 'WAIT/%';
-- a parameter of a prepared statement is an operand like a constant
PREPARE by_thread(bigint) AS SELECT count(*) FROM pd.events_waits_history_long WHERE thread_id = $1;
EXPLAIN (COSTS OFF) EXECUTE by_thread(3);
EXECUTE by_thread(3);
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE by_thread(3);
EXECUTE by_thread(3);
EXECUTE by_thread(NULL);  -- = NULL is never true
RESET plan_cache_mode;
DEALLOCATE by_thread;

-- The same rows with pushdown on and off: every pushed query, counted and summed.
CREATE TABLE pushdown_queries (id int, cond text);
INSERT INTO pushdown_queries VALUES
  (1, 'thread_id = 2'),
  (2, 'thread_id IN (1, 3)'),
  (3, '2 = thread_id'),
  (4, 'event_id < 100'),
  (5, '100 > event_id'),
  (6, 'event_id BETWEEN 500 AND 600'),
  (7, 'event_id >= 1600 AND thread_id <> 2'),
  (8, 'thread_id = ANY (ARRAY[2, NULL])'),
  (9, 'thread_id IN (SELECT 1 UNION SELECT 2)'),
  (10, 'event_name = ''wait/io/file/app/log'''),
  (11, 'event_name IN (''wait/synch/rwlock/app/cache_rw'', ''no/such'')'),
  (12, 'event_name LIKE ''wait/synch/%'''),
  (13, 'event_name LIKE ''wait/synch/%_lock'''),
  (14, 'event_name LIKE ''wait/io/file/app/log'''),
  (15, 'object_name IS NULL'),
  (16, 'number_of_bytes IS NOT NULL AND thread_id = 1'),
  (17, 'nesting_event_id IS NULL AND event_id <= 3'),
  (18, 'timer_wait > 500000 AND timer_start < 2000000000'),
  (19, 'object_instance_begin = 20480'),
  (20, 'thread_id = 99'),
  (21, 'event_name = ''wait/synch/mutex/app/queue_lock'' AND thread_id = 2::smallint'),
  (22, 'thread_id = 2::integer AND source LIKE ''%:%'''),
  (23, 'thread_id = (SELECT max(thread_id) FROM pd.threads)'),
  (24, 'event_name = ANY (ARRAY(SELECT name FROM pd.setup_instruments WHERE name LIKE ''%lock%''))'),
  (25, 'event_name IS NULL'),
  (26, 'event_name IS NOT NULL AND thread_id = 3'),
  (27, 'thread_id IS NULL'),
  (28, 'event_id IS NOT NULL AND event_name LIKE ''wait/io/%''');
CREATE FUNCTION pushdown_result(cond text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  result text;
BEGIN
  EXECUTE format('SELECT count(*) || '' rows, sum '' || coalesce(sum(event_id * 7 + thread_id), 0) '
                 || 'FROM pd.events_waits_history_long WHERE %s', cond) INTO result;
  RETURN result;
END $$;
CREATE TABLE pushdown_on AS SELECT id, cond, pushdown_result(cond) AS result FROM pushdown_queries;
SET perfschema_fdw.pushdown = off;
CREATE TABLE pushdown_off AS SELECT id, cond, pushdown_result(cond) AS result FROM pushdown_queries;
EXPLAIN (COSTS OFF) SELECT * FROM pd.events_waits_history_long WHERE thread_id = 2;
RESET perfschema_fdw.pushdown;
SELECT o.id, o.cond, o.result AS pushed, f.result AS not_pushed,
       o.result = f.result AS same
  FROM pushdown_on o JOIN pushdown_off f USING (id) ORDER BY o.id;

-- Joins with an application table: a parameterized scan probes the reader with
-- each outer value (forced here: the planner prefers a hash join at this size).
CREATE TABLE watched (event_name text, thread_id bigint);
INSERT INTO watched VALUES ('wait/io/file/app/log', 1), ('wait/synch/cond/app/queue_not_empty', 3),
  ('no/such/instrument', 2);
ANALYZE watched;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
EXPLAIN (COSTS OFF)
SELECT w.event_name, count(*) FROM watched w
  JOIN pd.events_waits_history_long h ON h.event_name = w.event_name
 GROUP BY w.event_name ORDER BY 1;
SELECT w.event_name, count(*) FROM watched w
  JOIN pd.events_waits_history_long h ON h.event_name = w.event_name
 GROUP BY w.event_name ORDER BY 1;
EXPLAIN (COSTS OFF)
SELECT w.event_name, count(*) FROM watched w
  JOIN pd.events_waits_history_long h ON h.event_name = w.event_name AND h.thread_id = w.thread_id
 GROUP BY w.event_name ORDER BY 1;
SELECT w.event_name, count(*) FROM watched w
  JOIN pd.events_waits_history_long h ON h.event_name = w.event_name AND h.thread_id = w.thread_id
 GROUP BY w.event_name ORDER BY 1;
-- a LATERAL subquery and a correlated subquery probe the same way
SELECT w.event_name, l.n FROM watched w,
  LATERAL (SELECT count(*) AS n FROM pd.events_waits_history_long h
            WHERE h.thread_id = w.thread_id AND h.event_id < 50) l ORDER BY 1;
SELECT t.thread_id, (SELECT count(*) FROM pd.events_waits_history_long h
                      WHERE h.thread_id = t.thread_id) AS waits
  FROM pd.threads t ORDER BY 1;
SET perfschema_fdw.pushdown = off;
SELECT w.event_name, count(*) FROM watched w
  JOIN pd.events_waits_history_long h ON h.event_name = w.event_name AND h.thread_id = w.thread_id
 GROUP BY w.event_name ORDER BY 1;
RESET perfschema_fdw.pushdown;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;

-- Tables the transaction can change: the executor checks pushed conditions
-- again, and while changes are pending the reader tests nothing, so a row the
-- transaction changed is seen with its new values.
EXPLAIN (COSTS OFF) SELECT name FROM pd.setup_instruments WHERE enabled = 'NO';
BEGIN;
UPDATE pd.setup_instruments SET enabled = 'NO' WHERE name = 'wait/synch/mutex/app/cache_lock';
SELECT name, enabled FROM pd.setup_instruments WHERE enabled = 'NO' ORDER BY name;
SELECT name, enabled FROM pd.setup_instruments
 WHERE name = 'wait/synch/mutex/app/cache_lock' AND enabled = 'NO';
ROLLBACK;
SELECT name, enabled FROM pd.setup_instruments WHERE enabled = 'NO' ORDER BY name;
-- history tables only hide rows on TRUNCATE: their conditions stay exact
BEGIN;
TRUNCATE pd.events_waits_history_long;
SELECT count(*) FROM pd.events_waits_history_long WHERE thread_id = 2;
ROLLBACK;
SELECT count(*) FROM pd.events_waits_history_long WHERE thread_id = 2;

-- Aggregates the scan computes itself (aggregate.c): count(*), count(column),
-- sum, min and max of bigint columns, without GROUP BY, when the reader tests
-- every condition.  EXPLAIN VERBOSE shows them as "Reader Aggregates".
EXPLAIN (VERBOSE, COSTS OFF) SELECT count(*) FROM pd.events_waits_history_long;
EXPLAIN (VERBOSE, COSTS OFF)
SELECT count(*), count(number_of_bytes), sum(timer_wait), min(event_id), max(event_id),
       sum(timer_wait) / count(*) AS mean, count(*) + 1
  FROM pd.events_waits_history_long WHERE thread_id = 2 AND event_name LIKE 'wait/io/%';
-- not pushed: a condition the executor checks, GROUP BY, DISTINCT, FILTER, an
-- expression argument, avg, a table the transaction can change, a join
EXPLAIN (COSTS OFF) SELECT count(*) FROM pd.events_waits_history_long WHERE thread_id + 1 = 3;
EXPLAIN (COSTS OFF) SELECT thread_id, count(*) FROM pd.events_waits_history_long GROUP BY thread_id;
-- (16 and later sort the input of count(DISTINCT) in a Sort node under the
-- Aggregate, 15 inside it; with enable_presorted_aggregate off every version shows
-- the plan of 15)
DO $$ BEGIN
  IF current_setting('enable_presorted_aggregate', true) IS NOT NULL THEN
    SET enable_presorted_aggregate = off;
  END IF;
END $$;
EXPLAIN (COSTS OFF) SELECT count(DISTINCT thread_id) FROM pd.events_waits_history_long;
DO $$ BEGIN
  IF current_setting('enable_presorted_aggregate', true) IS NOT NULL THEN
    RESET enable_presorted_aggregate;
  END IF;
END $$;
EXPLAIN (COSTS OFF) SELECT count(*) FILTER (WHERE thread_id = 1) FROM pd.events_waits_history_long;
EXPLAIN (COSTS OFF) SELECT sum(event_id + 1) FROM pd.events_waits_history_long;
EXPLAIN (COSTS OFF) SELECT avg(timer_wait) FROM pd.events_waits_history_long;
EXPLAIN (COSTS OFF) SELECT count(*) FROM pd.setup_instruments;
EXPLAIN (COSTS OFF) SELECT count(*) FROM pd.events_waits_history_long h JOIN pd.threads t USING (thread_id);
-- the same results pushed and not, for every condition above
CREATE FUNCTION aggregate_result(cond text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  result text;
BEGIN
  EXECUTE format('SELECT concat_ws('' '', count(*), count(number_of_bytes), count(nesting_event_id), '
                 || 'sum(timer_wait), sum(number_of_bytes), min(event_id), max(event_id), '
                 || 'min(number_of_bytes), max(end_event_id)) '
                 || 'FROM pd.events_waits_history_long WHERE %s', cond) INTO result;
  RETURN result;
END $$;
CREATE TABLE aggregates_on AS SELECT id, aggregate_result(cond) AS result FROM pushdown_queries;
SET perfschema_fdw.pushdown_aggregates = off;
CREATE TABLE aggregates_off AS SELECT id, aggregate_result(cond) AS result FROM pushdown_queries;
EXPLAIN (COSTS OFF) SELECT count(*) FROM pd.events_waits_history_long;
RESET perfschema_fdw.pushdown_aggregates;
SELECT count(*) AS conditions, count(*) FILTER (WHERE o.result = f.result) AS same
  FROM aggregates_on o JOIN aggregates_off f USING (id);
SELECT o.id, o.result FROM aggregates_on o WHERE o.id IN (1, 12, 16, 20) ORDER BY o.id;
-- a parameter, a correlated subquery (a rescan per outer row), no rows at all
PREPARE aggregates_of(bigint) AS
  SELECT count(*), sum(timer_wait) > 0, min(event_id) FROM pd.events_waits_history_long WHERE thread_id = $1;
EXECUTE aggregates_of(1);
EXECUTE aggregates_of(99);
DEALLOCATE aggregates_of;
EXPLAIN (COSTS OFF) SELECT t.thread_id, (SELECT count(*) FROM pd.events_waits_history_long h
                                          WHERE h.thread_id = t.thread_id) FROM pd.threads t;
SELECT t.thread_id, (SELECT count(*) FROM pd.events_waits_history_long h
                      WHERE h.thread_id = t.thread_id) AS waits,
       (SELECT max(event_id) FROM pd.events_waits_history_long h
         WHERE h.thread_id = t.thread_id AND h.event_id < 100) AS last_below_100
  FROM pd.threads t ORDER BY 1;
SELECT count(*), sum(timer_wait), min(event_id) FROM pd.events_waits_history_long WHERE thread_id = 99;
-- pending changes of the transaction apply row by row: a TRUNCATE hides every row
BEGIN;
TRUNCATE pd.events_waits_history_long;
SELECT count(*), sum(timer_wait), max(event_id) FROM pd.events_waits_history_long WHERE thread_id = 2;
ROLLBACK;
SELECT count(*), sum(timer_wait) > 0 FROM pd.events_waits_history_long WHERE thread_id = 2;
-- foreign tables as partitions, aggregated partition by partition: the scans
-- compute nothing (partial aggregates stay with the executor), same results
CREATE TABLE waits_by_thread (thread_id bigint, event_id bigint, timer_wait bigint)
  PARTITION BY LIST (thread_id);
CREATE FOREIGN TABLE waits_thread_1 PARTITION OF waits_by_thread FOR VALUES IN (1)
  SERVER pushdown OPTIONS (table 'events_waits_history_long');
CREATE FOREIGN TABLE waits_thread_2 PARTITION OF waits_by_thread FOR VALUES IN (2)
  SERVER pushdown OPTIONS (table 'events_waits_history_long');
SET enable_partitionwise_aggregate = on;
EXPLAIN (COSTS OFF) SELECT count(*), max(event_id) FROM waits_by_thread WHERE thread_id = 1;
SELECT count(*), max(event_id), sum(timer_wait) > 0 FROM waits_by_thread WHERE thread_id = 1;
SELECT count(*), max(event_id) FROM waits_by_thread;
SET perfschema_fdw.pushdown_aggregates = off;
SELECT count(*), max(event_id), sum(timer_wait) > 0 FROM waits_by_thread WHERE thread_id = 1;
SELECT count(*), max(event_id) FROM waits_by_thread;
RESET perfschema_fdw.pushdown_aggregates;
RESET enable_partitionwise_aggregate;
DROP TABLE waits_by_thread;

-- Estimates: the region's rows (5,000) times the selectivity of the conditions,
-- PostgreSQL's defaults until ANALYZE samples the region.
SELECT plan_rows('SELECT * FROM pd.events_waits_history_long') AS all_rows,
       plan_rows('SELECT * FROM pd.events_waits_history_long WHERE thread_id = 2') AS one_thread,
       plan_rows('SELECT * FROM pd.events_waits_history_long WHERE event_name LIKE ''wait/io/%''') AS io;
-- (ANALYZE, not VERBOSE: 18 adds the sample's timings and buffer counts to VERBOSE)
ANALYZE pd.events_waits_history_long;
SELECT reltuples FROM pg_class WHERE oid = 'pd.events_waits_history_long'::regclass;
SELECT plan_rows('SELECT * FROM pd.events_waits_history_long') AS all_rows,
       plan_rows('SELECT * FROM pd.events_waits_history_long WHERE thread_id = 2') AS one_thread,
       plan_rows('SELECT * FROM pd.events_waits_history_long WHERE event_name LIKE ''wait/io/%''') AS io;
SELECT attname, n_distinct, most_common_vals FROM pg_stats
 WHERE schemaname = 'pd' AND tablename = 'events_waits_history_long'
   AND attname IN ('thread_id', 'event_name') ORDER BY attname;

DROP TABLE pushdown_queries, pushdown_on, pushdown_off, watched, aggregates_on, aggregates_off;
DROP FUNCTION pushdown_result(text);
DROP FUNCTION aggregate_result(text);
DROP SCHEMA pd CASCADE;
DROP SERVER pushdown;
