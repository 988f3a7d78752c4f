/*-------------------------------------------------------------------------
 *
 * xact.c
 *	  Transaction callbacks of perfschema_fdw: a transaction's setup changes
 *	  are applied to the regions when it commits, forgotten when it aborts.
 *
 * Nothing is written to the region while the transaction runs.  The core
 * keeps a log of the changes (modify.c records them), each with its
 * subtransaction level and command id.  At PRE_COMMIT the core applies the
 * log under the setup lock of each region (re-reading the current setup,
 * writing only the columns each change set); an error there aborts the
 * transaction and nothing is applied.  Abort discards the log; a
 * subtransaction's abort discards its part (RegisterSubXactCallback).
 * PREPARE TRANSACTION is refused: a region cannot hold a prepared change.
 * When a transaction ends, the core counts it (core_transaction.cpp): a
 * server's files are checked again by the next one.
 *
 * Changes applied at PRE_COMMIT are seen by the instrumented process at
 * once: if the commit itself failed after that point (it cannot fail for a
 * reason of this extension), the region would keep them.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "storage/proc.h"
#include "utils/timestamp.h"

#include "shim.h"

/*
 * commit_changes
 *		Apply the pending changes at PRE_COMMIT.
 *
 * The wait for a region's setup lock ends at a cancel (pg_cancel_backend) and
 * after lock_timeout or statement_timeout, whichever is shorter.  PostgreSQL
 * turns statement_timeout off before it commits, so the bound is applied here,
 * counted from the start of the wait.  While it waits (and applies the changes),
 * pg_stat_activity shows the backend in the wait event PerfschemaSetupLock
 * (PostgreSQL 17 and later; before, the generic Extension).
 */
static void
commit_changes(void)
{
	static uint32 setup_lock_event = 0;
	PfsCoreWriteError err;
	int			timeout_ms = 0;
	bool		by_statement_timeout = false;
	bool		committed;

	if (StatementTimeout > 0)
	{
		timeout_ms = StatementTimeout;
		by_statement_timeout = true;
	}
	if (LockTimeout > 0 && (timeout_ms == 0 || LockTimeout < timeout_ms))
	{
		timeout_ms = LockTimeout;
		by_statement_timeout = false;
	}
	while (pfs_core_write_pending())
	{
		pgstat_report_wait_start(pfs_extension_wait_event("PerfschemaSetupLock", &setup_lock_event));
		committed = pfs_core_write_commit(INTERRUPTS_CAN_BE_PROCESSED() ? &InterruptPending : NULL,
										  (uint32) timeout_ms, &err);
		pgstat_report_wait_end();
		if (committed)
			break;
		if (err.error.kind == PFS_CORE_LOCK_TIMEOUT)
			ereport(ERROR,
					(errcode(by_statement_timeout ? ERRCODE_QUERY_CANCELED : ERRCODE_LOCK_NOT_AVAILABLE),
					 errmsg(by_statement_timeout ? "canceling statement due to statement timeout"
							: "canceling statement due to lock timeout"),
					 errdetail_internal("%s", err.error.detail)));
		if (err.error.kind != PFS_CORE_INTERRUPTED)
			pfs_report_write_error(&err);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * pfs_xact_callback
 *		Apply the transaction's changes before it commits; forget them after
 *		it ends either way.
 */
static void
pfs_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
			commit_changes();
			break;
		case XACT_EVENT_PRE_PREPARE:
			if (pfs_core_write_pending())
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot PREPARE a transaction that has changed performance_schema setup tables")));
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			pfs_core_write_discard();
			pfs_core_transaction_end();
			break;
	}
}

/*
 * pfs_give_transaction_clock
 *		Tell the core when the transaction started (the time PostgreSQL read
 *		then), as its clock for the once-a-millisecond checks: it need not read
 *		the clock again.
 */
void
pfs_give_transaction_clock(void)
{
	pfs_core_transaction_clock(GetCurrentTransactionStartTimestamp() +
							   (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * USECS_PER_SEC);
}

/*
 * pfs_subxact_callback
 *		A subtransaction's changes go to its parent when it commits, away
 *		when it aborts (ROLLBACK TO SAVEPOINT).
 */
static void
pfs_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					 SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_COMMIT_SUB)
		pfs_core_write_subxact_end(GetCurrentTransactionNestLevel(), true);
	else if (event == SUBXACT_EVENT_ABORT_SUB)
		pfs_core_write_subxact_end(GetCurrentTransactionNestLevel(), false);
}

/*
 * pfs_xact_register
 *		Register the callbacks, once per backend: _PG_init calls it (every
 *		transaction that reads a region ends in pfs_xact_callback).
 */
void
pfs_xact_register(void)
{
	static bool registered = false;

	if (registered)
		return;
	RegisterXactCallback(pfs_xact_callback, NULL);
	RegisterSubXactCallback(pfs_subxact_callback, NULL);
	registered = true;
}
