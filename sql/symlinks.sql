--
-- Symbolic links and hard links (issue 42): a server reads its region through
-- a symbolic link, and a directory's symbolic links and hard links, only with
-- the server option follow_symlinks 'true'; otherwise the region is refused
-- and the directory's links are skipped with a WARNING.
--
\! rm -rf /tmp/perfschema_fdw_regress/links* && mkdir -m 0755 /tmp/perfschema_fdw_regress/links
\! build/tools/pfs_fixture --mode=0666 --pid=201 /tmp/perfschema_fdw_regress/links/app.201.pfs
\! build/tools/pfs_fixture --mode=0666 --pid=202 /tmp/perfschema_fdw_regress/links.202.pfs
\! ln -s /tmp/perfschema_fdw_regress/links.202.pfs /tmp/perfschema_fdw_regress/links/app.202.pfs
\! build/tools/pfs_fixture --mode=0666 --pid=203 /tmp/perfschema_fdw_regress/links.203.pfs
\! ln /tmp/perfschema_fdw_regress/links.203.pfs /tmp/perfschema_fdw_regress/links/app.203.pfs
\! ln -s /tmp/perfschema_fdw_regress/links/app.201.pfs /tmp/perfschema_fdw_regress/links.link.pfs

-- the option: a boolean, on servers only
CREATE SERVER bad_follow FOREIGN DATA WRAPPER perfschema_fdw
  OPTIONS (region '/tmp/perfschema_fdw_regress/links.link.pfs', follow_symlinks 'maybe');
CREATE SERVER via_link FOREIGN DATA WRAPPER perfschema_fdw
  OPTIONS (region '/tmp/perfschema_fdw_regress/links.link.pfs');
CREATE FOREIGN TABLE bad_table (thread_id numeric) SERVER via_link
  OPTIONS (table 'threads', follow_symlinks 'true');

-- one region through a symbolic link: refused, then read once allowed
CREATE SCHEMA lnk;
IMPORT FOREIGN SCHEMA performance_schema LIMIT TO (threads) FROM SERVER via_link INTO lnk;
SELECT count(*) FROM lnk.threads;
ALTER SERVER via_link OPTIONS (ADD follow_symlinks 'true');
SELECT count(*) > 0 AS rows_read FROM lnk.threads;
ALTER SERVER via_link OPTIONS (SET follow_symlinks 'false');
SELECT count(*) FROM lnk.threads;

-- a directory: its symbolic link and hard link skipped with a WARNING each
CREATE SERVER links_dir FOREIGN DATA WRAPPER perfschema_fdw
  OPTIONS (region_directory '/tmp/perfschema_fdw_regress/links');
CREATE SCHEMA ldir;
IMPORT FOREIGN SCHEMA performance_schema LIMIT TO (threads) FROM SERVER links_dir INTO ldir;
SELECT process_id, count(*) > 0 AS has_threads FROM ldir.threads GROUP BY 1 ORDER BY 1;
ALTER SERVER links_dir OPTIONS (ADD follow_symlinks 'on');
SELECT process_id, count(*) > 0 AS has_threads FROM ldir.threads GROUP BY 1 ORDER BY 1;

DROP SCHEMA lnk CASCADE;
DROP SCHEMA ldir CASCADE;
DROP SERVER via_link;
DROP SERVER links_dir;
\! rm -rf /tmp/perfschema_fdw_regress/links*
