/*-------------------------------------------------------------------------
 *
 * perfschema_fdw.c
 *	  Foreign-data wrapper showing a perfschema region (the shared file an
 *	  instrumented process writes) as performance_schema tables.
 *
 * This file holds the module's entry (_PG_init: the core's catalogue, the
 * settings) and the handler, which names every callback, in the order
 * PostgreSQL calls them (shim.h says which file implements each).  The
 * validator is in option.c with the options it checks.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "foreign/fdwapi.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/syscache.h"

#include "compat.h"
#include "shim.h"

PFS_MODULE_MAGIC;

bool		pfs_pushdown = true;
bool		pfs_pushdown_aggregates = true;

PG_FUNCTION_INFO_V1(perfschema_fdw_handler);

PGDLLEXPORT void _PG_init(void);

/*
 * Module load: build the core's catalogue now (it is noexcept and would
 * terminate on an allocation failure later), forget mapped regions whenever
 * a server changes, so a new region path takes effect, and register the
 * transaction callbacks (xact.c).
 */
static void
server_changed(Datum arg, int cacheid, uint32 hashvalue)
{
	pfs_core_region_forget_all();
	pfs_core_write_forget_regions();
}

/* perfschema_fdw.max_mapped_regions: the core keeps at most that many mapped. */
static int	pfs_max_mapped_regions = 1024;

static void
assign_max_mapped_regions(int newval, void *extra)
{
	pfs_core_set_max_mapped_regions(newval);
}

void
_PG_init(void)
{
	if (!pfs_core_init())
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory")));
	CacheRegisterSyscacheCallback(FOREIGNSERVEROID, server_changed, (Datum) 0);
	pfs_xact_register();
	DefineCustomBoolVariable("perfschema_fdw.pushdown",
							 "Lets the reader evaluate simple WHERE conditions itself.",
							 "When off, the executor evaluates every condition on every row.",
							 &pfs_pushdown, true, PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("perfschema_fdw.pushdown_aggregates",
							 "Lets a scan compute count, sum, min and max itself when the reader tests every condition.",
							 "When off (or when perfschema_fdw.pushdown is off), an Agg node computes them from every row.",
							 &pfs_pushdown_aggregates, true, PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("perfschema_fdw.max_mapped_regions",
							"Sets how many files of region directories a session keeps mapped between scans.",
							"A directory of more files is read a file at a time, each mapped when a scan reaches it.",
							&pfs_max_mapped_regions, 1024, 1, 16000, PGC_USERSET, 0,
							NULL, assign_max_mapped_regions, NULL);
	MarkGUCPrefixReserved("perfschema_fdw");
}

Datum
perfschema_fdw_handler(PG_FUNCTION_ARGS)
{
	FdwRoutine *routine = makeNode(FdwRoutine);

	/* planning a scan (scan_plan.c) */
	routine->GetForeignRelSize = pfsGetForeignRelSize;
	routine->GetForeignPaths = pfsGetForeignPaths;
	routine->GetForeignUpperPaths = pfsGetForeignUpperPaths;
	routine->GetForeignPlan = pfsGetForeignPlan;
	/* executing it (scan.c) */
	routine->BeginForeignScan = pfsBeginForeignScan;
	routine->IterateForeignScan = pfsIterateForeignScan;
	routine->ReScanForeignScan = pfsReScanForeignScan;
	routine->RecheckForeignScan = pfsRecheckForeignScan;
	routine->EndForeignScan = pfsEndForeignScan;
	routine->ExplainForeignScan = pfsExplainForeignScan;
	/* planning UPDATE, INSERT and DELETE (modify_plan.c) */
	routine->IsForeignRelUpdatable = pfsIsForeignRelUpdatable;
	routine->AddForeignUpdateTargets = pfsAddForeignUpdateTargets;
	routine->PlanForeignModify = pfsPlanForeignModify;
	/* executing them, COPY FROM and TRUNCATE (modify.c) */
	routine->BeginForeignModify = pfsBeginForeignModify;
	routine->BeginForeignInsert = pfsBeginForeignInsert;
	routine->ExecForeignInsert = pfsExecForeignInsert;
	routine->ExecForeignUpdate = pfsExecForeignUpdate;
	routine->ExecForeignDelete = pfsExecForeignDelete;
	routine->EndForeignModify = pfsEndForeignModify;
	routine->EndForeignInsert = pfsEndForeignInsert;
	routine->ExecForeignTruncate = pfsExecForeignTruncate;
	/* ANALYZE (analyze.c), IMPORT FOREIGN SCHEMA (import.c) */
	routine->AnalyzeForeignTable = pfsAnalyzeForeignTable;
	routine->ImportForeignSchema = pfsImportForeignSchema;

	PG_RETURN_POINTER(routine);
}
