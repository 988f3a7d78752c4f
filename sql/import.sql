--
-- IMPORT FOREIGN SCHEMA performance_schema: one foreign table per table of the
-- reader, with its columns, types and NOT NULL; LIMIT TO and EXCEPT; hand-made
-- foreign tables.
--
CREATE SCHEMA ps;
IMPORT FOREIGN SCHEMA performance_schema FROM SERVER pfs INTO ps;

-- every table of the registry (agent/reader/tables.cpp), named after itself
SELECT count(*) AS tables,
       count(*) FILTER (WHERE ft.ftoptions <> ARRAY['table=' || c.relname]) AS misnamed
  FROM pg_foreign_table ft
  JOIN pg_class c ON c.oid = ft.ftrelid
 WHERE c.relnamespace = 'ps'::regnamespace;

SELECT c.relname, ft.ftoptions
  FROM pg_foreign_table ft
  JOIN pg_class c ON c.oid = ft.ftrelid
 WHERE c.relnamespace = 'ps'::regnamespace
 ORDER BY c.relname;

-- every table's columns, types and NOT NULL, in order: a column added, moved or
-- renamed shows here
SELECT table_name, column_name, data_type, is_nullable
  FROM information_schema.columns
 WHERE table_schema = 'ps'
 ORDER BY table_name, ordinal_position;

-- LIMIT TO imports the tables named (names the region does not have are ignored)
CREATE SCHEMA ps_some;
IMPORT FOREIGN SCHEMA performance_schema LIMIT TO (threads, setup_consumers, no_such_table)
  FROM SERVER pfs INTO ps_some;
SELECT c.relname FROM pg_class c WHERE c.relnamespace = 'ps_some'::regnamespace ORDER BY 1;

-- EXCEPT imports all the others
CREATE SCHEMA ps_rest;
IMPORT FOREIGN SCHEMA performance_schema EXCEPT (threads, status, events_waits_history_long)
  FROM SERVER pfs INTO ps_rest;
SELECT (SELECT count(*) FROM pg_class c WHERE c.relnamespace = 'ps'::regnamespace)
       - count(*) AS not_imported,
       count(*) FILTER (WHERE relname IN ('threads', 'status', 'events_waits_history_long')) AS excepted
  FROM pg_class c WHERE c.relnamespace = 'ps_rest'::regnamespace;
SET client_min_messages = warning;
DROP SCHEMA ps_rest CASCADE;
RESET client_min_messages;

-- only performance_schema exists on the server; IMPORT takes no options
IMPORT FOREIGN SCHEMA information_schema FROM SERVER pfs INTO ps_some;
IMPORT FOREIGN SCHEMA "PERFORMANCE_SCHEMA" FROM SERVER pfs INTO ps_some;
IMPORT FOREIGN SCHEMA performance_schema FROM SERVER pfs INTO ps_some
  OPTIONS (import_not_null 'false');

--
-- Hand-made foreign tables: columns are matched by name, so a subset of the
-- columns, in any order, works; an unknown column or a wrong type is an error
--
CREATE FOREIGN TABLE my_threads (name text, thread_id bigint)
  SERVER pfs OPTIONS ("table" 'threads');
SELECT * FROM my_threads ORDER BY thread_id;
ALTER FOREIGN TABLE my_threads ADD COLUMN parent_thread_id bigint;
ALTER FOREIGN TABLE my_threads DROP COLUMN name;
SELECT * FROM my_threads ORDER BY thread_id;
SELECT count(*) FROM my_threads;
ALTER FOREIGN TABLE my_threads OPTIONS (SET "table" 'thread');
ALTER FOREIGN TABLE my_threads OPTIONS (SET "table" 'setup_actors');
SELECT * FROM my_threads;
DROP FOREIGN TABLE my_threads;
-- a prepared query sees the table's new options at its next execution (a backend
-- keeps a table's options and column map between scans until the catalogue changes)
CREATE FOREIGN TABLE my_thread_ids (thread_id bigint) SERVER pfs OPTIONS ("table" 'threads');
PREPARE thread_ids AS SELECT count(*) > 0 AS some FROM my_thread_ids;
EXECUTE thread_ids;
ALTER FOREIGN TABLE my_thread_ids OPTIONS (SET "table" 'setup_actors');
EXECUTE thread_ids;
ALTER FOREIGN TABLE my_thread_ids OPTIONS (SET "table" 'threads');
EXECUTE thread_ids;
DEALLOCATE thread_ids;
DROP FOREIGN TABLE my_thread_ids;

CREATE FOREIGN TABLE unknown_column (thread_id bigint, nickname text)
  SERVER pfs OPTIONS ("table" 'threads');
SELECT thread_id FROM unknown_column;
CREATE FOREIGN TABLE wrong_type (thread_id integer)
  SERVER pfs OPTIONS ("table" 'threads');
SELECT * FROM wrong_type;
-- EXPLAIN alone does not read the region or check the columns
EXPLAIN (COSTS OFF) SELECT * FROM wrong_type;
DROP FOREIGN TABLE unknown_column, wrong_type;

-- tables MySQL does not let change are read-only (modify.sql tests the setup
-- tables, which are not)
INSERT INTO ps.status VALUES ('x', 1);
DELETE FROM ps.threads;
