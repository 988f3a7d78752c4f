--
-- Joining performance_schema tables with each other and with the user's own
-- tables; plans (EXPLAIN shows the region and the table); row estimates;
-- rescans of the foreign scan on the inner side of nested loops.
--
CREATE TABLE owners (instrument text PRIMARY KEY, team text NOT NULL);
INSERT INTO owners VALUES
  ('wait/synch/mutex/app/queue_lock', 'queueing'),
  ('wait/synch/cond/app/queue_not_empty', 'queueing'),
  ('wait/synch/mutex/app/cache_lock', 'caching'),
  ('wait/synch/rwlock/app/cache_rw', 'caching'),
  ('wait/synch/mutex/unknown/lock', 'nobody');
ANALYZE owners;

-- wait time per owning team
SELECT o.team, count(*) AS waits, sum(h.timer_wait) AS total_ps,
       format_pico_time(sum(h.timer_wait)) AS total
  FROM ps.events_waits_history_long h
  JOIN owners o ON o.instrument = h.event_name
 GROUP BY o.team ORDER BY o.team;

-- every instrument, with its team if it has one; teams without instruments
SELECT i.name, i.enabled, o.team
  FROM ps.setup_instruments i
  FULL JOIN owners o ON o.instrument = i.name
 ORDER BY i.name NULLS LAST, o.team;

-- three foreign tables and a user table: who holds which mutex, waited on by whom
SELECT m.name, m.locked_by_thread_id AS holder, t.name AS holder_class,
       c.thread_id AS waiter, o.team
  FROM ps.mutex_instances m
  JOIN ps.threads t ON t.thread_id = m.locked_by_thread_id
  JOIN ps.events_waits_current c ON c.object_instance_begin = m.object_instance_begin
  LEFT JOIN owners o ON o.instrument = m.name
 ORDER BY m.name;

-- row estimates come from the provider's counters: the threads created so far
-- (3 of 4 slots), the history_long slots claimed (9 of 10)
CREATE FUNCTION plan_rows(query text) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE
  plan json;
BEGIN
  EXECUTE 'EXPLAIN (FORMAT JSON) ' || query INTO plan;
  RETURN (plan -> 0 -> 'Plan' ->> 'Plan Rows')::numeric;
END $$;
SELECT t AS table_name, plan_rows(format('SELECT * FROM ps.%I', t)) AS estimated
  FROM unnest(ARRAY['setup_consumers', 'threads', 'events_waits_current',
                    'events_waits_history', 'events_waits_history_long',
                    'events_waits_summary_by_thread_by_event_name', 'mutex_instances']) AS t;

EXPLAIN (COSTS OFF)
SELECT o.team, count(*)
  FROM ps.events_waits_history_long h
  JOIN owners o ON o.instrument = h.event_name
 GROUP BY o.team;
EXPLAIN (VERBOSE, COSTS OFF)
SELECT thread_id, event_name FROM ps.events_waits_current WHERE operation = 'lock';

-- the foreign scan as the inner side of a nested loop: a parameterized scan, the
-- reader returns the rows of each outer value only (setup_instruments can be
-- changed by the transaction, so the executor checks the condition again)
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
EXPLAIN (COSTS OFF)
SELECT o.team, i.name FROM owners o JOIN ps.setup_instruments i ON i.name = o.instrument;
-- (EXPLAIN ANALYZE's actual rows per loop: 18 prints them with two decimals, 0.80,
-- and shows buffers unless told not to; the rows rounded as 15 prints them)
CREATE FUNCTION explain_analyze(query text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  line text;
  actual text[];
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) ' || query LOOP
    actual := regexp_match(line, 'actual rows=([0-9.]+)');
    IF actual IS NOT NULL THEN
      line := replace(line, 'actual rows=' || actual[1], 'actual rows=' || round(actual[1]::numeric));
    END IF;
    RETURN NEXT line;
  END LOOP;
END $$;
SELECT explain_analyze('SELECT o.team, i.name FROM owners o JOIN ps.setup_instruments i ON i.name = o.instrument');
DROP FUNCTION explain_analyze(text);
SELECT o.team, i.name FROM owners o JOIN ps.setup_instruments i ON i.name = o.instrument
 ORDER BY o.team, i.name;
-- a parameterized subquery: rescans with a new parameter each time
SELECT o.instrument,
       (SELECT count(*) FROM ps.events_waits_history_long h
         WHERE h.event_name = o.instrument) AS waits
  FROM owners o ORDER BY o.instrument;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;

-- a self-join: each scan of the same table copies the rows for itself
SELECT a.thread_id, a.event_id, b.event_id AS nested_in
  FROM ps.events_waits_current a
  JOIN ps.events_waits_current b ON b.event_id = a.nesting_event_id AND b.thread_id = a.thread_id;

-- copying rows into an ordinary table, and a cursor over a foreign scan
CREATE TABLE waits_copy AS SELECT * FROM ps.events_waits_history_long;
SELECT count(*), sum(timer_wait) FROM waits_copy;
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT thread_id, event_id FROM ps.events_waits_history ORDER BY 1, 2;
FETCH 2 FROM c;
FETCH PRIOR FROM c;
FETCH LAST FROM c;
CLOSE c;
COMMIT;

-- prepared statements reuse the plan (fdw_private is copied with it)
PREPARE waits_of(bigint) AS
  SELECT count(*) FROM ps.events_waits_history_long WHERE thread_id = $1;
EXECUTE waits_of(1);
EXECUTE waits_of(2);
EXECUTE waits_of(1);
EXECUTE waits_of(2);
EXECUTE waits_of(1);
EXECUTE waits_of(2);
DEALLOCATE waits_of;
DROP TABLE waits_copy;
