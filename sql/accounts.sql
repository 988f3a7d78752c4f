--
-- Accounts, users and hosts (MySQL 8.0) of the fixture: threads 1 and 3 belong to
-- the NULL account (MySQL's rows of internal threads), thread 2 to alice@localhost,
-- whose exited threads left 5 queue_lock waits and 2 ER_LOCK_DEADLOCK, and user
-- alice one cache_lock wait of a TRUNCATE of the accounts. An account row is its
-- own rows + its live threads'; a user or host row its own + its accounts' + its
-- live threads'. TRUNCATE moves each level into the next, as MySQL.
--
\! build/tools/pfs_fixture --mode=0666 /tmp/perfschema_fdw_regress/accounts.region
CREATE SERVER pfs_accounts FOREIGN DATA WRAPPER perfschema_fdw
  OPTIONS (region '/tmp/perfschema_fdw_regress/accounts.region');
CREATE SCHEMA psa;
IMPORT FOREIGN SCHEMA performance_schema
  LIMIT TO (accounts, users, hosts, events_waits_summary_by_account_by_event_name,
            events_waits_summary_by_user_by_event_name, events_waits_summary_by_host_by_event_name,
            events_waits_summary_by_thread_by_event_name, events_errors_summary_by_account_by_error,
            events_statements_summary_by_account_by_event_name, memory_summary_by_host_by_event_name)
  FROM SERVER pfs_accounts INTO psa;
SET timezone = 'UTC';

SELECT * FROM psa.accounts ORDER BY "user" NULLS FIRST;
SELECT * FROM psa.users ORDER BY "user" NULLS FIRST;
SELECT * FROM psa.hosts ORDER BY host NULLS FIRST;

SELECT "user", host, event_name, count_star, sum_timer_wait, min_timer_wait, avg_timer_wait, max_timer_wait
  FROM psa.events_waits_summary_by_account_by_event_name WHERE count_star > 0
 ORDER BY "user" NULLS FIRST, event_name;
SELECT "user", event_name, count_star, sum_timer_wait
  FROM psa.events_waits_summary_by_user_by_event_name WHERE count_star > 0
 ORDER BY "user" NULLS FIRST, event_name;
SELECT host, event_name, count_star, sum_timer_wait
  FROM psa.events_waits_summary_by_host_by_event_name WHERE count_star > 0
 ORDER BY host NULLS FIRST, event_name;
-- Every account has a row per wait class.
SELECT "user", host, count(*) FROM psa.events_waits_summary_by_account_by_event_name
 GROUP BY 1, 2 ORDER BY 1 NULLS FIRST;
SELECT "user", host, error_number, error_name, sum_error_raised, sum_error_handled, first_seen
  FROM psa.events_errors_summary_by_account_by_error WHERE sum_error_raised > 0 OR sum_error_handled > 0
 ORDER BY "user" NULLS FIRST, error_number NULLS FIRST;
SELECT count(*) AS statement_rows FROM psa.events_statements_summary_by_account_by_event_name;
SELECT count(*) AS memory_rows FROM psa.memory_summary_by_host_by_event_name;

-- TRUNCATE by account: the live threads' rows move into the accounts, the accounts'
-- into users and hosts; the account rows are then empty, the users' and hosts' keep
-- their totals.
TRUNCATE psa.events_waits_summary_by_account_by_event_name;
SELECT "user", host, sum(count_star) FROM psa.events_waits_summary_by_account_by_event_name
 GROUP BY 1, 2 ORDER BY 1 NULLS FIRST;
SELECT "user", sum(count_star) FROM psa.events_waits_summary_by_user_by_event_name
 GROUP BY 1 ORDER BY 1 NULLS FIRST;
SELECT thread_id, sum(count_star) FROM psa.events_waits_summary_by_thread_by_event_name
 GROUP BY 1 ORDER BY 1;
-- TRUNCATE by user: the users empty, the hosts keep theirs.
TRUNCATE psa.events_waits_summary_by_user_by_event_name;
SELECT "user", sum(count_star) FROM psa.events_waits_summary_by_user_by_event_name
 GROUP BY 1 ORDER BY 1 NULLS FIRST;
SELECT host, sum(count_star) FROM psa.events_waits_summary_by_host_by_event_name
 GROUP BY 1 ORDER BY 1 NULLS FIRST;
-- TRUNCATE accounts: TOTAL_CONNECTIONS restarts from the current connections.
TRUNCATE psa.accounts;
SELECT "user", host, current_connections, total_connections FROM psa.accounts ORDER BY 1 NULLS FIRST;

DROP SCHEMA psa CASCADE;
DROP SERVER pfs_accounts;
