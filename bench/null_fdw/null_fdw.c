/*
 * null_fdw: the floor of a foreign scan, for bench/fdw_small_queries.sh.
 *
 * A foreign table of this wrapper returns its option `rows` rows, every column NULL,
 * and does nothing else: no file, no region, no conditions pushed down (PostgreSQL
 * tests them on the NULL rows). Whatever a real foreign-data wrapper does to return
 * the same number of rows costs at least this, so its transactions per second are at
 * most this wrapper's: the benchmark prints this floor's tps beside perfschema_fdw's
 * and the heap's.
 */
#include "postgres.h"

#include "access/reloptions.h"
#include "catalog/pg_foreign_table.h"
#include "commands/defrem.h"
#include "executor/tuptable.h"
#include "foreign/fdwapi.h"
#include "foreign/foreign.h"
#include "nodes/makefuncs.h"
#include "nodes/pg_list.h"
#include "optimizer/pathnode.h"
#include "optimizer/planmain.h"
#include "optimizer/restrictinfo.h"
#include "utils/builtins.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(null_fdw_handler);
PG_FUNCTION_INFO_V1(null_fdw_validator);

static long
table_rows(Oid relid)
{
	ListCell   *cell;

	foreach(cell, GetForeignTable(relid)->options)
	{
		DefElem    *def = lfirst_node(DefElem, cell);

		if (strcmp(def->defname, "rows") == 0)
			return strtol(defGetString(def), NULL, 10);
	}
	return 0;
}

static void
null_get_rel_size(PlannerInfo *root, RelOptInfo *baserel, Oid relid)
{
	baserel->rows = table_rows(relid);
	baserel->fdw_private = (void *) makeInteger((int) baserel->rows);
}

static void
null_get_paths(PlannerInfo *root, RelOptInfo *baserel, Oid relid)
{
	Cost		total = 1 + baserel->rows * 0.01;

	/* PostgreSQL 17 added fdw_restrictinfo, 18 disabled_nodes (as fdw/compat.h) */
#if PG_VERSION_NUM >= 180000
	add_path(baserel, (Path *) create_foreignscan_path(root, baserel, NULL, baserel->rows, 0, 1, total,
													   NIL, baserel->lateral_relids, NULL, NIL, NIL));
#elif PG_VERSION_NUM >= 170000
	add_path(baserel, (Path *) create_foreignscan_path(root, baserel, NULL, baserel->rows, 1, total,
													   NIL, baserel->lateral_relids, NULL, NIL, NIL));
#else
	add_path(baserel, (Path *) create_foreignscan_path(root, baserel, NULL, baserel->rows, 1, total,
													   NIL, baserel->lateral_relids, NULL, NIL));
#endif
}

static ForeignScan *
null_get_plan(PlannerInfo *root, RelOptInfo *baserel, Oid relid, ForeignPath *best_path,
			  List *tlist, List *scan_clauses, Plan *outer_plan)
{
	return make_foreignscan(tlist, extract_actual_clauses(scan_clauses, false), baserel->relid,
							NIL, list_make1(baserel->fdw_private), NIL, NIL, outer_plan);
}

typedef struct NullScan
{
	long		rows;
	long		returned;
} NullScan;

static void
null_begin(ForeignScanState *node, int eflags)
{
	ForeignScan *plan = (ForeignScan *) node->ss.ps.plan;
	NullScan   *scan = palloc0(sizeof(NullScan));

	scan->rows = intVal(linitial(plan->fdw_private));
	node->fdw_state = scan;
}

static TupleTableSlot *
null_iterate(ForeignScanState *node)
{
	NullScan   *scan = node->fdw_state;
	TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;

	if (scan->returned >= scan->rows)
		return ExecClearTuple(slot);
	scan->returned++;
	return ExecStoreAllNullTuple(slot);
}

static void
null_rescan(ForeignScanState *node)
{
	((NullScan *) node->fdw_state)->returned = 0;
}

static void
null_end(ForeignScanState *node)
{
}

Datum
null_fdw_handler(PG_FUNCTION_ARGS)
{
	FdwRoutine *routine = makeNode(FdwRoutine);

	routine->GetForeignRelSize = null_get_rel_size;
	routine->GetForeignPaths = null_get_paths;
	routine->GetForeignPlan = null_get_plan;
	routine->BeginForeignScan = null_begin;
	routine->IterateForeignScan = null_iterate;
	routine->ReScanForeignScan = null_rescan;
	routine->EndForeignScan = null_end;
	PG_RETURN_POINTER(routine);
}

Datum
null_fdw_validator(PG_FUNCTION_ARGS)
{
	List	   *options = untransformRelOptions(PG_GETARG_DATUM(0));
	ListCell   *cell;

	foreach(cell, options)
	{
		DefElem    *def = lfirst_node(DefElem, cell);

		if (strcmp(def->defname, "rows") != 0)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
					 errmsg("invalid option \"%s\"", def->defname),
					 errhint("null_fdw takes one option, \"rows\", on a foreign table.")));
	}
	PG_RETURN_VOID();
}
