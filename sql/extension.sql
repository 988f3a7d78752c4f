--
-- perfschema_fdw: the extension, format_pico_time, and the options of servers
-- and foreign tables (who may set a region, what is valid where).
--
-- The tests read regions written by build/tools/pfs_fixture (the CMake build)
-- under /tmp/perfschema_fdw_regress; the server runs as another OS user, so the
-- files are made readable by everyone.
\! mkdir -p /tmp/perfschema_fdw_regress && chmod 755 /tmp/perfschema_fdw_regress
\! build/tools/pfs_fixture /tmp/perfschema_fdw_regress/good.region

CREATE EXTENSION perfschema_fdw;
SELECT extname, extversion, extrelocatable FROM pg_extension WHERE extname = 'perfschema_fdw';

--
-- format_pico_time: MySQL 8's FORMAT_PICO_TIME
--
SELECT v, format_pico_time(v)
  FROM (VALUES (0::bigint), (5), (-5), (999), (1000), (1234), (999999), (1000000),
               (1500000), (1234567890), (999999999999), (1000000000000),
               (59999999999999), (60000000000000), (90000000000000),
               (3600000000000000), (86400000000000000), (-1500000),
               (9223372036854775807)) AS t(v)
 ORDER BY v;
SELECT format_pico_time(NULL::bigint) IS NULL AS null_bigint,
       format_pico_time(NULL::float8) IS NULL AS null_float;
-- other numeric types: integer, numeric (a sum of bigints), double precision
SELECT format_pico_time(42) AS int4,
       format_pico_time(sum(x)) AS numeric_sum,
       format_pico_time(2.5e6::float8) AS float8,
       format_pico_time(8.64e27::float8) AS huge
  FROM (VALUES (1000000::bigint), (2000000)) AS t(x);
SELECT format_pico_time('NaN'::float8);
SELECT format_pico_time('-Infinity'::float8);

--
-- Servers: "region" is required, absolute, and the only server option
--
CREATE SERVER pfs FOREIGN DATA WRAPPER perfschema_fdw
  OPTIONS (region '/tmp/perfschema_fdw_regress/good.region');
CREATE SERVER no_region FOREIGN DATA WRAPPER perfschema_fdw;
CREATE SERVER relative FOREIGN DATA WRAPPER perfschema_fdw OPTIONS (region 'good.region');
CREATE SERVER typo FOREIGN DATA WRAPPER perfschema_fdw
  OPTIONS (region '/tmp/perfschema_fdw_regress/good.region', regoin '/tmp/x');
CREATE SERVER table_on_server FOREIGN DATA WRAPPER perfschema_fdw
  OPTIONS (region '/tmp/perfschema_fdw_regress/good.region', "table" 'threads');
ALTER SERVER pfs OPTIONS (DROP region);
ALTER FOREIGN DATA WRAPPER perfschema_fdw OPTIONS (region '/tmp/x');
CREATE USER MAPPING FOR CURRENT_USER SERVER pfs OPTIONS (password 'x');

--
-- Foreign tables: "table" is required and must name a performance_schema table
--
CREATE FOREIGN TABLE no_table (name text) SERVER pfs;
-- (the hint lists every table, and the list grows with the reader: shown tersely,
-- then its start checked)
\set VERBOSITY terse
CREATE FOREIGN TABLE unknown_table (name text) SERVER pfs OPTIONS ("table" 'events_statements_summary_by_program');
CREATE FOREIGN TABLE upper_case (name text) SERVER pfs OPTIONS ("table" 'THREADS');
\set VERBOSITY default
DO $$
DECLARE
  hint text;
BEGIN
  CREATE FOREIGN TABLE upper_case (name text) SERVER pfs OPTIONS ("table" 'THREADS');
EXCEPTION WHEN fdw_table_not_found THEN
  GET STACKED DIAGNOSTICS hint = PG_EXCEPTION_HINT;
  RAISE NOTICE '%', left(hint, 77);
END $$;
CREATE FOREIGN TABLE region_on_table (name text) SERVER pfs
  OPTIONS ("table" 'threads', region '/tmp/x');

--
-- Only superusers and roles with the privileges of pg_read_server_files may
-- choose the file a server maps
--
CREATE ROLE regress_pfs_plain;
GRANT USAGE ON FOREIGN DATA WRAPPER perfschema_fdw TO regress_pfs_plain;
SET ROLE regress_pfs_plain;
CREATE SERVER plain FOREIGN DATA WRAPPER perfschema_fdw OPTIONS (region '/etc/passwd');
RESET ROLE;
-- the owner of an existing server cannot point it elsewhere either
ALTER SERVER pfs OWNER TO regress_pfs_plain;
SET ROLE regress_pfs_plain;
ALTER SERVER pfs OPTIONS (SET region '/etc/passwd');
RESET ROLE;
ALTER SERVER pfs OWNER TO CURRENT_USER;
GRANT pg_read_server_files TO regress_pfs_plain;
SET ROLE regress_pfs_plain;
CREATE SERVER plain FOREIGN DATA WRAPPER perfschema_fdw
  OPTIONS (region '/tmp/perfschema_fdw_regress/good.region');
DROP SERVER plain;
RESET ROLE;
REVOKE pg_read_server_files FROM regress_pfs_plain;
REVOKE USAGE ON FOREIGN DATA WRAPPER perfschema_fdw FROM regress_pfs_plain;
SELECT srvname, srvoptions FROM pg_foreign_server ORDER BY srvname;
