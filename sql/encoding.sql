--
-- Region text is UTF-8: in a database of another encoding it is converted, and
-- a character that encoding lacks is an error (only for the columns a query
-- reads).  The fixture's third setup_actors row has user 'zoë', role '日本'.
--
SELECT "user", role FROM ps.setup_actors WHERE enabled = 'NO';
CREATE DATABASE regress_pfs_latin1 TEMPLATE template0 ENCODING 'LATIN1' LOCALE 'C';
\c regress_pfs_latin1
SET client_encoding = 'UTF8';
SET client_min_messages = warning;
CREATE EXTENSION perfschema_fdw;
CREATE SERVER pfs FOREIGN DATA WRAPPER perfschema_fdw
  OPTIONS (region '/tmp/perfschema_fdw_regress/good.region');
CREATE SCHEMA ps;
IMPORT FOREIGN SCHEMA performance_schema LIMIT TO (setup_actors) FROM SERVER pfs INTO ps;
RESET client_min_messages;
SELECT "user", octet_length("user") AS latin1_bytes FROM ps.setup_actors WHERE enabled = 'NO';
SELECT role FROM ps.setup_actors WHERE enabled = 'NO';
SELECT host, "user" FROM ps.setup_actors ORDER BY "user";
\c contrib_regression
DROP DATABASE regress_pfs_latin1;
