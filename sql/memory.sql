--
-- Thousands of scans leave the backend's memory where it was: PostgreSQL's
-- memory contexts and the process's resident size (the row sets are C++
-- allocations freed with each scan, also when a scan fails), and the region
-- stays mapped once.
--
CREATE FUNCTION backend_rss_kb() RETURNS bigint LANGUAGE sql AS $$
  SELECT substring(pg_read_file('/proc/self/status') FROM 'VmRSS:\s+(\d+) kB')::bigint
$$;
CREATE FUNCTION context_bytes() RETURNS bigint LANGUAGE sql AS $$
  SELECT sum(total_bytes)::bigint FROM pg_backend_memory_contexts
$$;
CREATE FUNCTION region_mappings(path text) RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM regexp_split_to_table(pg_read_file('/proc/self/maps'), E'\n') AS line
   WHERE line LIKE '%' || path
$$;
-- n rounds of scans of small and larger tables, joins, and scans that fail
CREATE FUNCTION scan_rounds(n int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  total bigint := 0;
  c bigint;
BEGIN
  FOR i IN 1..n LOOP
    SELECT count(*) INTO c FROM ps.events_waits_history_long;
    total := total + c;
    SELECT count(*) INTO c
      FROM ps.threads t JOIN ps.events_waits_history h ON h.thread_id = t.thread_id
      JOIN owners o ON o.instrument = h.event_name;
    total := total + c;
    SELECT count(*) INTO c FROM ps.events_waits_summary_by_thread_by_event_name
     WHERE event_name LIKE 'wait/synch/%';
    total := total + c;
    BEGIN
      PERFORM * FROM gone.threads;
    EXCEPTION WHEN undefined_file THEN
      total := total + 1;
    END;
  END LOOP;
  RETURN total;
END $$;
CREATE SERVER gone FOREIGN DATA WRAPPER perfschema_fdw
  OPTIONS (region '/tmp/perfschema_fdw_regress/no-such.region');
CREATE SCHEMA gone;
IMPORT FOREIGN SCHEMA performance_schema LIMIT TO (threads) FROM SERVER gone INTO gone;

-- warm up, then measure 5000 rounds
SELECT scan_rounds(500) > 0 AS scanned;
SELECT backend_rss_kb() AS rss_before, context_bytes() AS contexts_before \gset
SELECT scan_rounds(5000) > 0 AS scanned;
SELECT backend_rss_kb() - :rss_before < 1024 AS rss_flat,
       context_bytes() - :contexts_before < 16384 AS contexts_flat;
SELECT region_mappings('/tmp/perfschema_fdw_regress/good.region') AS mappings;

DROP SCHEMA gone CASCADE;
DROP SERVER gone;
