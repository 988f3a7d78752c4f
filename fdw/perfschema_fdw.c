/*-------------------------------------------------------------------------
 *
 * perfschema_fdw.c
 *	  Foreign-data wrapper showing a perfschema region (the shared file an
 *	  instrumented process writes) as performance_schema tables.
 *
 * This file holds the handler and the scan callbacks.  The rows come from
 * the C++ core (pfs_core.h), which copies a table's rows consistently out of
 * the region into a compact row set in BeginForeignScan; IterateForeignScan
 * turns cells into Datums without copying (text cells carry room for a
 * varlena header; only a database whose encoding is not UTF-8 gets copies).
 * The row set lives until the end of the scan, also on error: a reset
 * callback on the scan's memory context frees it.  ReScan rewinds over the
 * same copy, so every pass of a nested loop sees the same rows.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/sysattr.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "foreign/fdwapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/planmain.h"
#include "optimizer/restrictinfo.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "compat.h"
#include "shim.h"

PFS_MODULE_MAGIC;

/* Row estimate when the region cannot be opened at plan time. */
#define PFS_DEFAULT_ROWS 1000

/* Planner state, in baserel->fdw_private. */
typedef struct PfsPlanState
{
	PfsTableOptions opts;
	List	   *wanted;			/* attnums the query reads (integer list) */
} PfsPlanState;

/* Executor state, in node->fdw_state; allocated in cxt. */
typedef struct PfsScanState
{
	MemoryContext cxt;			/* this scan's context */
	MemoryContextCallback free_rows;	/* frees rows when cxt goes */
	PfsTableOptions opts;
	PfsCoreRowset *rows;		/* NULL with EXPLAIN only */
	size_t		next;			/* next row to return */
	int		   *cell_attr;		/* slot attribute (0-based) of each cell */
	bool	   *cell_text;		/* is the cell a text column */
	bool		convert_text;	/* database encoding is not UTF-8 */
	PfsOverlay *overlay;		/* the transaction's pending changes (modify.c) */
} PfsScanState;

PG_FUNCTION_INFO_V1(perfschema_fdw_handler);

PGDLLEXPORT void _PG_init(void);

static void pfsGetForeignRelSize(PlannerInfo *root, RelOptInfo *baserel,
								 Oid foreigntableid);
static void pfsGetForeignPaths(PlannerInfo *root, RelOptInfo *baserel,
							   Oid foreigntableid);
static ForeignScan *pfsGetForeignPlan(PlannerInfo *root, RelOptInfo *baserel,
									  Oid foreigntableid, ForeignPath *best_path,
									  List *tlist, List *scan_clauses,
									  Plan *outer_plan);
static void pfsBeginForeignScan(ForeignScanState *node, int eflags);
static TupleTableSlot *pfsIterateForeignScan(ForeignScanState *node);
static void pfsReScanForeignScan(ForeignScanState *node);
static void pfsEndForeignScan(ForeignScanState *node);
static void pfsExplainForeignScan(ForeignScanState *node, ExplainState *es);

/*
 * Module load: build the core's catalogue now (it is noexcept and would
 * terminate on an allocation failure later), and forget mapped regions
 * whenever a server changes, so a new region path takes effect.
 */
static void
server_changed(Datum arg, int cacheid, uint32 hashvalue)
{
	pfs_core_region_forget_all();
	pfs_core_write_forget_regions();
}

void
_PG_init(void)
{
	if (!pfs_core_init())
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory")));
	CacheRegisterSyscacheCallback(FOREIGNSERVEROID, server_changed, (Datum) 0);
}

Datum
perfschema_fdw_handler(PG_FUNCTION_ARGS)
{
	FdwRoutine *routine = makeNode(FdwRoutine);

	routine->GetForeignRelSize = pfsGetForeignRelSize;
	routine->GetForeignPaths = pfsGetForeignPaths;
	routine->GetForeignPlan = pfsGetForeignPlan;
	routine->BeginForeignScan = pfsBeginForeignScan;
	routine->IterateForeignScan = pfsIterateForeignScan;
	routine->ReScanForeignScan = pfsReScanForeignScan;
	routine->EndForeignScan = pfsEndForeignScan;
	routine->ExplainForeignScan = pfsExplainForeignScan;
	routine->ImportForeignSchema = pfsImportForeignSchema;
	pfs_modify_register(routine);

	PG_RETURN_POINTER(routine);
}

/*
 * wanted_attnums
 *		The attributes the query reads: in the target list or in a qual (the
 *		executor checks every qual).  A whole-row reference reads them all.
 */
static List *
wanted_attnums(RelOptInfo *baserel)
{
	Bitmapset  *attrs = NULL;
	List	   *wanted = NIL;
	ListCell   *lc;
	bool		whole_row;
	AttrNumber	attnum;

	pull_varattnos((Node *) baserel->reltarget->exprs, baserel->relid, &attrs);
	foreach(lc, baserel->baserestrictinfo)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);

		pull_varattnos((Node *) rinfo->clause, baserel->relid, &attrs);
	}
	whole_row = bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, attrs);
	for (attnum = 1; attnum <= baserel->max_attr; attnum++)
	{
		if (whole_row ||
			bms_is_member(attnum - FirstLowInvalidHeapAttributeNumber, attrs))
			wanted = lappend_int(wanted, attnum);
	}
	return wanted;
}

/*
 * pfsGetForeignRelSize
 *		Estimate the row count from the region's array sizes (an upper bound).
 *		A region that cannot be opened now gets a default: the scan reports
 *		the error.
 */
static void
pfsGetForeignRelSize(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid)
{
	PfsPlanState *state = palloc0(sizeof(PfsPlanState));
	PfsCoreRegion *region;
	PfsCoreError err;
	double		rows = PFS_DEFAULT_ROWS;

	pfs_get_table_options(foreigntableid, &state->opts);
	state->wanted = wanted_attnums(baserel);

	region = pfs_core_region_get(state->opts.serverid, state->opts.region, &err);
	if (region != NULL)
		rows = pfs_core_estimated_rows(region, state->opts.table);

	baserel->tuples = rows;
	baserel->rows = clamp_row_est(rows *
								  clauselist_selectivity(root,
														 baserel->baserestrictinfo,
														 0, JOIN_INNER, NULL));
	baserel->fdw_private = state;
}

/*
 * pfsGetForeignPaths
 *		One path: the rows are copied before the first one is returned
 *		(startup), then returned from memory.
 */
static void
pfsGetForeignPaths(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid)
{
	PfsPlanState *state = baserel->fdw_private;
	Cost		startup_cost;
	Cost		total_cost;

	startup_cost = baserel->baserestrictcost.startup +
		baserel->tuples * cpu_tuple_cost;
	total_cost = startup_cost +
		baserel->tuples * (cpu_tuple_cost + baserel->baserestrictcost.per_tuple);

	add_path(baserel, (Path *)
			 pfs_create_foreignscan_path(root, baserel, baserel->rows,
										 startup_cost, total_cost,
										 list_make1(state->wanted)));
}

/*
 * pfsGetForeignPlan
 *		A plain ForeignScan; the executor checks every qual.
 */
static ForeignScan *
pfsGetForeignPlan(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid,
				  ForeignPath *best_path, List *tlist, List *scan_clauses,
				  Plan *outer_plan)
{
	scan_clauses = extract_actual_clauses(scan_clauses, false);
	return make_foreignscan(tlist, scan_clauses, baserel->relid, NIL,
							best_path->fdw_private, NIL, NIL, outer_plan);
}

static void
free_rows(void *arg)
{
	PfsScanState *state = arg;

	pfs_core_rowset_free(state->rows);
	state->rows = NULL;
}

/*
 * map_columns
 *		Match the foreign table's columns to the region table's by name and
 *		check their types; mark the region columns the query reads.
 *		core_attr receives, for each region column, its slot attribute (or -1).
 */
static void
map_columns(Relation rel, const PfsTableOptions *opts, List *wanted_attnums,
			bool *wanted, int *core_attr)
{
	TupleDesc	tupdesc = RelationGetDescr(rel);
	int			ncolumns = pfs_core_column_count(opts->table);
	ListCell   *lc;
	int			i;

	for (i = 0; i < ncolumns; i++)
		wanted[i] = false;
	pfs_map_columns(rel, opts, core_attr);
	foreach(lc, wanted_attnums)
	{
		int			attr = lfirst_int(lc) - 1;

		if (TupleDescAttr(tupdesc, attr)->attisdropped)
			continue;
		for (i = 0; i < ncolumns; i++)
		{
			if (core_attr[i] == attr)
				wanted[i] = true;
		}
	}
}

/*
 * copy_rows
 *		The core's consistent copy of the table.  The core polls the interrupt
 *		flag; when it stops for an interrupt that does not end the query, the
 *		copy starts again.
 */
static PfsCoreRowset *
copy_rows(const PfsTableOptions *opts, const bool *wanted)
{
	for (;;)
	{
		PfsCoreError err;
		PfsCoreRegion *region;
		PfsCoreRowset *rows;

		CHECK_FOR_INTERRUPTS();
		region = pfs_core_region_get(opts->serverid, opts->region, &err);
		if (region == NULL)
			pfs_report_core_error(&err);
		rows = pfs_core_scan(region, opts->table, wanted, VARHDRSZ,
							 INTERRUPTS_CAN_BE_PROCESSED() ? &InterruptPending : NULL,
							 &err);
		if (rows != NULL)
			return rows;
		if (err.kind != PFS_CORE_INTERRUPTED)
			pfs_report_core_error(&err);
	}
}

/*
 * pfsBeginForeignScan
 *		Copy the table's rows (not for EXPLAIN without ANALYZE).
 */
static void
pfsBeginForeignScan(ForeignScanState *node, int eflags)
{
	ForeignScan *plan = (ForeignScan *) node->ss.ps.plan;
	Relation	rel = node->ss.ss_currentRelation;
	MemoryContext cxt;
	MemoryContext old;
	PfsScanState *state;
	bool	   *wanted;
	int		   *core_attr;
	int			ncolumns;
	int			k;

	cxt = AllocSetContextCreate(node->ss.ps.state->es_query_cxt,
								"perfschema_fdw scan", ALLOCSET_SMALL_SIZES);
	state = MemoryContextAllocZero(cxt, sizeof(PfsScanState));
	state->cxt = cxt;
	state->free_rows.func = free_rows;
	state->free_rows.arg = state;
	MemoryContextRegisterResetCallback(cxt, &state->free_rows);
	node->fdw_state = state;

	old = MemoryContextSwitchTo(cxt);
	pfs_get_table_options(RelationGetRelid(rel), &state->opts);
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
	{
		MemoryContextSwitchTo(old);
		return;
	}

	ncolumns = pfs_core_column_count(state->opts.table);
	wanted = palloc(sizeof(bool) * ncolumns);
	core_attr = palloc(sizeof(int) * ncolumns);
	map_columns(rel, &state->opts, linitial(plan->fdw_private), wanted, core_attr);
	state->overlay = pfs_overlay_begin(node, &state->opts, wanted, core_attr);

	state->rows = copy_rows(&state->opts, wanted);
	state->convert_text = GetDatabaseEncoding() != PG_UTF8 &&
		GetDatabaseEncoding() != PG_SQL_ASCII;

	state->cell_attr = palloc(sizeof(int) * Max(state->rows->ncells, 1));
	state->cell_text = palloc(sizeof(bool) * Max(state->rows->ncells, 1));
	for (k = 0; k < state->rows->ncells; k++)
	{
		int			column = state->rows->columns[k];

		state->cell_attr[k] = core_attr[column];
		state->cell_text[k] = pfs_core_column_type(state->opts.table, column) == PFS_CORE_TEXT;
	}
	MemoryContextSwitchTo(old);
}

/*
 * text_datum
 *		A text cell as a Datum.  In a UTF-8 (or SQL_ASCII) database it points
 *		into the row set: the varlena header goes in the room the core left
 *		before each text.  Otherwise it is converted from UTF-8 (the region's
 *		encoding) in the per-tuple memory context.
 */
static Datum
text_datum(const PfsScanState *state, const PfsCoreCell *cell)
{
	char	   *text = state->rows->text + cell->value;
	char	   *converted;

	if (!state->convert_text)
	{
		SET_VARSIZE(text, VARHDRSZ + cell->len);
		return PointerGetDatum(text);
	}
	text += VARHDRSZ;
	converted = pg_any_to_server(text, (int) cell->len, PG_UTF8);
	if (converted == text)		/* nothing to convert: not NUL-terminated */
		return PointerGetDatum(cstring_to_text_with_len(text, (int) cell->len));
	return CStringGetTextDatum(converted);
}

/*
 * next_copied_row
 *		Return the next copied row as a virtual tuple; columns the query does
 *		not read are NULL.
 */
static TupleTableSlot *
next_copied_row(ForeignScanState *node)
{
	PfsScanState *state = node->fdw_state;
	TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;
	const PfsCoreRowset *rows = state->rows;
	const PfsCoreCell *cells;
	int			k;

	ExecClearTuple(slot);
	if (state->next >= rows->nrows)
		return slot;
	CHECK_FOR_INTERRUPTS();

	memset(slot->tts_isnull, true, sizeof(bool) * slot->tts_tupleDescriptor->natts);
	cells = rows->cells + state->next * rows->ncells;
	for (k = 0; k < rows->ncells; k++)
	{
		int			attr = state->cell_attr[k];

		slot->tts_isnull[attr] = cells[k].isnull;
		if (cells[k].isnull)
			slot->tts_values[attr] = (Datum) 0;
		else if (state->cell_text[k])
			slot->tts_values[attr] = text_datum(state, &cells[k]);
		else
			slot->tts_values[attr] = Int64GetDatum(cells[k].value);
	}
	ExecStoreVirtualTuple(slot);
	state->next++;
	return slot;
}

/*
 * pfsIterateForeignScan
 *		The next copied row, with the transaction's pending setup changes
 *		applied (modify.c): rows it deleted are skipped, rows it inserted
 *		come after the copied ones.
 */
static TupleTableSlot *
pfsIterateForeignScan(ForeignScanState *node)
{
	PfsScanState *state = node->fdw_state;

	for (;;)
	{
		TupleTableSlot *slot = next_copied_row(node);

		if (state->overlay == NULL)
			return slot;
		if (TupIsNull(slot))
		{
			pfs_overlay_extra_row(state->overlay, slot);
			return slot;
		}
		if (pfs_overlay_row(state->overlay, slot))
			return slot;
	}
}

/*
 * pfsReScanForeignScan
 *		Start again over the same copy.
 */
static void
pfsReScanForeignScan(ForeignScanState *node)
{
	PfsScanState *state = node->fdw_state;

	state->next = 0;
	pfs_overlay_rewind(state->overlay);
}

/*
 * pfsEndForeignScan
 *		Free the copy (through the context's reset callback).
 */
static void
pfsEndForeignScan(ForeignScanState *node)
{
	PfsScanState *state = node->fdw_state;

	if (state != NULL)
		MemoryContextDelete(state->cxt);
	node->fdw_state = NULL;
}

/*
 * pfsExplainForeignScan
 *		Show the region file and the table.
 */
static void
pfsExplainForeignScan(ForeignScanState *node, ExplainState *es)
{
	PfsScanState *state = node->fdw_state;

	ExplainPropertyText("Region", state->opts.region, es);
	ExplainPropertyText("Region Table", state->opts.table_name, es);
}
