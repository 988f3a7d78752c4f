--
-- Compact scan tuples (scan_tlist.c): a scan returns only the columns the
-- query reads, in the order of its target list.  Every shape of query gives
-- the rows an ordinary table holding the same rows gives, both where the scan
-- uses compact tuples and where it keeps the table's row type (a whole row, a
-- system column, a row mark, a target of UPDATE, a physical target list), and
-- with a transaction's pending changes (applied to whole rows, then projected).
--
\! build/tools/pfs_fixture --mode=0666 --history-long-rows=1500 /tmp/perfschema_fdw_regress/scan_tuples.region
CREATE SERVER scan_tuples FOREIGN DATA WRAPPER perfschema_fdw
  OPTIONS (region '/tmp/perfschema_fdw_regress/scan_tuples.region');
CREATE SCHEMA st;
IMPORT FOREIGN SCHEMA performance_schema
  LIMIT TO (events_waits_history_long, setup_instruments)
  FROM SERVER scan_tuples INTO st;
CREATE TABLE waits AS SELECT * FROM st.events_waits_history_long;
CREATE TABLE instruments AS SELECT * FROM st.setup_instruments;

-- Rows of a query on the foreign table that the same query on the copy does
-- not give, and the reverse (0 and 0: the same rows).
CREATE FUNCTION differences(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  foreign_only bigint;
  heap_only bigint;
  n bigint;
  on_copy text := replace(replace(query, 'st.events_waits_history_long', 'waits'),
                          'st.setup_instruments', 'instruments');
BEGIN
  EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) d', query, on_copy) INTO foreign_only;
  EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) d', on_copy, query) INTO heap_only;
  EXECUTE format('SELECT count(*) FROM (%s) q', query) INTO n;
  RETURN n || ' rows, ' || foreign_only || ' and ' || heap_only || ' different';
END $$;

CREATE TABLE shapes (id int, query text);
INSERT INTO shapes VALUES
  -- compact: some columns, in another order than the table's
  (1, 'SELECT timer_wait, event_id, event_name FROM st.events_waits_history_long WHERE thread_id = 2'),
  (2, 'SELECT * FROM st.events_waits_history_long'),
  (3, 'SELECT event_id, event_id, thread_id FROM st.events_waits_history_long WHERE event_id < 50'),
  (4, 'SELECT event_id * 2, upper(event_name), coalesce(object_name, ''-'') FROM st.events_waits_history_long'),
  -- a condition the executor checks, on a column the query does not return
  (5, 'SELECT event_id FROM st.events_waits_history_long WHERE source LIKE ''%:%'' AND timer_wait % 3 = 1'),
  (6, 'SELECT number_of_bytes FROM st.events_waits_history_long WHERE event_name LIKE ''wait/io/%'''),
  -- the table's row type: a whole row, a system column
  (7, 'SELECT t::text FROM st.events_waits_history_long t WHERE thread_id = 1'),
  (8, 'SELECT tableoid > 0, event_id FROM st.events_waits_history_long WHERE thread_id = 3'),
  -- scans under other nodes: joins, grouping, sorting, a subquery, a set operation
  (9, 'SELECT a.event_id, b.event_name FROM st.events_waits_history_long a
         JOIN st.events_waits_history_long b ON a.event_id = b.event_id AND a.thread_id = b.thread_id
        WHERE a.thread_id = 1'),
  (10, 'SELECT thread_id, event_name, count(*), sum(timer_wait) FROM st.events_waits_history_long
         GROUP BY thread_id, event_name'),
  (11, 'SELECT event_id, timer_start FROM st.events_waits_history_long ORDER BY timer_start DESC, event_id, thread_id LIMIT 25'),
  (12, 'SELECT event_name FROM st.events_waits_history_long w
         WHERE timer_wait > (SELECT avg(timer_wait) FROM st.events_waits_history_long v
                              WHERE v.event_name = w.event_name)'),
  (13, 'SELECT event_id FROM st.events_waits_history_long WHERE thread_id = 1
        UNION ALL SELECT event_id FROM st.events_waits_history_long WHERE thread_id = 2'),
  (14, 'SELECT i.name, i.enabled, count(w.event_id) FROM st.setup_instruments i
         LEFT JOIN st.events_waits_history_long w ON w.event_name = i.name GROUP BY i.name, i.enabled');
SELECT id, differences(query) FROM shapes ORDER BY id;

-- a LATERAL reference evaluated at the scan (a placeholder on the nullable side of
-- an outer join): the plain path is parameterized by the relation it refers to
SELECT t.x, s.c FROM (VALUES (1), (NULL)) t(x)
  LEFT JOIN LATERAL (SELECT coalesce(t.x, w.event_id) AS c FROM st.events_waits_history_long w
                      WHERE w.event_id <= 2 AND w.thread_id = 1) s ON true ORDER BY 1, 2;

-- EXPLAIN VERBOSE names the same output columns as before
EXPLAIN (VERBOSE, COSTS OFF)
  SELECT timer_wait, event_id FROM st.events_waits_history_long WHERE thread_id = 2 AND source LIKE '%:%';

-- A row mark (UPDATE of a local table from the foreign table) and a target of
-- UPDATE keep the table's row type.
CREATE TABLE slowest (event_name text PRIMARY KEY, timer_wait bigint DEFAULT 0);
INSERT INTO slowest SELECT DISTINCT event_name FROM waits;
UPDATE slowest s SET timer_wait = w.timer_wait
  FROM st.events_waits_history_long w
 WHERE w.event_name = s.event_name AND w.event_id = (SELECT max(event_id) FROM waits v WHERE v.event_name = s.event_name);
SELECT s.event_name, s.timer_wait = (SELECT timer_wait FROM waits v WHERE v.event_name = s.event_name
                                       ORDER BY event_id DESC LIMIT 1) AS same
  FROM slowest s ORDER BY 1;
BEGIN;
UPDATE st.setup_instruments SET timed = 'NO' WHERE name LIKE 'wait/synch/%';
-- pending changes: whole rows with the changes, projected to the columns read
SELECT timed, count(*) FROM st.setup_instruments GROUP BY timed ORDER BY timed;
SELECT name FROM st.setup_instruments WHERE timed = 'NO' ORDER BY name;
ROLLBACK;
SELECT timed, count(*) FROM st.setup_instruments GROUP BY timed ORDER BY timed;
BEGIN;
TRUNCATE st.events_waits_history_long;
SELECT count(*), max(event_id) FROM st.events_waits_history_long;
SELECT event_id, event_name FROM st.events_waits_history_long WHERE thread_id = 2;
ROLLBACK;
SELECT count(*), max(event_id) FROM st.events_waits_history_long;

DROP SCHEMA st CASCADE;
DROP SERVER scan_tuples;
DROP TABLE waits, instruments, shapes, slowest;
DROP FUNCTION differences(text);
