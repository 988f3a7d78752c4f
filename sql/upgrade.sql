--
-- Upgrades: version 1.0 updated with ALTER EXTENSION ... UPDATE has the same
-- objects as a fresh install of the default version (names, function
-- definitions, comments), in a database of its own.
--
CREATE DATABASE pfs_upgrade;
\c pfs_upgrade
CREATE EXTENSION perfschema_fdw VERSION '1.0';
SELECT extversion FROM pg_extension WHERE extname = 'perfschema_fdw';
ALTER EXTENSION perfschema_fdw UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'perfschema_fdw';
CREATE VIEW extension_objects AS
SELECT o.type, o.identity,
       CASE WHEN d.classid = 'pg_proc'::regclass THEN pg_get_functiondef(d.objid) END AS definition,
       obj_description(d.objid, c.relname) AS comment
  FROM pg_depend d
  JOIN pg_class c ON c.oid = d.classid
  CROSS JOIN LATERAL pg_identify_object(d.classid, d.objid, d.objsubid) o
 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'perfschema_fdw');
CREATE TABLE upgraded AS SELECT * FROM extension_objects;
DROP EXTENSION perfschema_fdw;
CREATE EXTENSION perfschema_fdw;
CREATE TABLE fresh AS SELECT * FROM extension_objects;
SELECT type, identity FROM fresh ORDER BY 1, 2;
-- nothing differs, either way
SELECT 'only after the upgrade' AS side, type, identity FROM (SELECT * FROM upgraded EXCEPT SELECT * FROM fresh) x
UNION ALL
SELECT 'only in a fresh install', type, identity FROM (SELECT * FROM fresh EXCEPT SELECT * FROM upgraded) y;
-- the 1.1 functions work after the upgrade
DROP EXTENSION perfschema_fdw;
CREATE EXTENSION perfschema_fdw VERSION '1.0';
ALTER EXTENSION perfschema_fdw UPDATE TO '1.1';
SELECT perfschema_snapshot_retention('1 day', 'no_history_yet') AS dropped;
\c contrib_regression
DROP DATABASE pfs_upgrade;
