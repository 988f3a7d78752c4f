--
-- The program's own metrics (MySQL 8.4's setup_meters and setup_metrics) of the
-- fixture's known meters and metrics: VALUE is the record's value plus the cells of
-- the live threads; ENABLED and FREQUENCY of a meter are updatable, checked, seen
-- by the transaction itself and written to the region at COMMIT (the program's
-- meter thread reads them there).
--
\! build/tools/pfs_fixture --mode=0666 /tmp/perfschema_fdw_regress/meters.region
CREATE SERVER pfs_meters FOREIGN DATA WRAPPER perfschema_fdw
  OPTIONS (region '/tmp/perfschema_fdw_regress/meters.region');
CREATE SCHEMA psm;
IMPORT FOREIGN SCHEMA performance_schema
  LIMIT TO (setup_meters, setup_metrics, status)
  FROM SERVER pfs_meters INTO psm;

SELECT * FROM psm.setup_meters ORDER BY name;
SELECT * FROM psm.setup_metrics ORDER BY meter, name;
SELECT variable_name, variable_value FROM psm.status
 WHERE variable_name IN ('meters_lost', 'metrics_lost') ORDER BY 1;

-- UPDATE of ENABLED and FREQUENCY: the transaction sees its change, ROLLBACK
-- leaves the region alone, COMMIT writes it.
BEGIN;
UPDATE psm.setup_meters SET enabled = 'yes', frequency = 1 WHERE name = 'pool';
SELECT name, frequency, enabled FROM psm.setup_meters ORDER BY name;
ROLLBACK;
SELECT name, frequency, enabled FROM psm.setup_meters ORDER BY name;
UPDATE psm.setup_meters SET enabled = 'no', frequency = 60 WHERE name = 'shop';
UPDATE psm.setup_meters SET enabled = 'YES' WHERE name = 'pool';
SELECT name, frequency, enabled FROM psm.setup_meters ORDER BY name;
\c
SELECT name, frequency, enabled FROM psm.setup_meters ORDER BY name;

-- What SQL may not change: FREQUENCY below 1 s or above MEDIUMINT UNSIGNED, an
-- ENABLED that is not YES or NO, a meter's name, setup_metrics.
UPDATE psm.setup_meters SET frequency = 0 WHERE name = 'shop';
UPDATE psm.setup_meters SET frequency = 16777216 WHERE name = 'shop';
UPDATE psm.setup_meters SET enabled = 'maybe' WHERE name = 'shop';
UPDATE psm.setup_meters SET name = 'store' WHERE name = 'shop';
UPDATE psm.setup_metrics SET value = 1;
DELETE FROM psm.setup_meters;
SELECT name, frequency, enabled FROM psm.setup_meters ORDER BY name;

DROP SCHEMA psm CASCADE;
DROP SERVER pfs_meters;
