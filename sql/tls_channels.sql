--
-- tls_channel_status (MySQL 8.0) of the fixture's TLS channels: its columns and
-- their types, the rows in registration order (mysql_main, registered first, has
-- records after mysql_admin's), a record being taken not shown, the status row
-- of lost properties; the table cannot be truncated or changed.
--
\! build/tools/pfs_fixture --mode=0666 /tmp/perfschema_fdw_regress/tls_channels.region
CREATE SERVER pfs_tls FOREIGN DATA WRAPPER perfschema_fdw
  OPTIONS (region '/tmp/perfschema_fdw_regress/tls_channels.region');
CREATE SCHEMA pstls;
IMPORT FOREIGN SCHEMA performance_schema LIMIT TO (tls_channel_status, status)
  FROM SERVER pfs_tls INTO pstls;

SELECT column_name, data_type, is_nullable
  FROM information_schema.columns
 WHERE table_schema = 'pstls' AND table_name = 'tls_channel_status' ORDER BY ordinal_position;

SELECT * FROM pstls.tls_channel_status;
SELECT channel, count(*) AS properties FROM pstls.tls_channel_status GROUP BY channel ORDER BY channel;
SELECT value FROM pstls.tls_channel_status WHERE property = 'Ssl_server_not_after';
SELECT variable_value FROM pstls.status WHERE variable_name = 'tls_properties_lost';

-- Not truncatable (as MySQL), and no other change either.
TRUNCATE pstls.tls_channel_status;
UPDATE pstls.tls_channel_status SET value = '0';
DELETE FROM pstls.tls_channel_status;

DROP SCHEMA pstls CASCADE;
DROP SERVER pfs_tls;
