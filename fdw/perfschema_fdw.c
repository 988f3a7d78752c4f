/*-------------------------------------------------------------------------
 *
 * perfschema_fdw.c
 *	  Foreign-data wrapper showing a perfschema region (the shared file an
 *	  instrumented process writes) as performance_schema tables.
 *
 * This file holds the handler, the planner callbacks and the scan callbacks.
 * The planner pushes the simple WHERE conditions it can (pushdown.c) into
 * the reader, also as parameterized paths for joins, and leaves the
 * executor only what the reader cannot test.  The rows come from the C++
 * core (pfs_core.h) in pieces of bounded size: a piece's cells become Datums
 * without copying (text cells carry room for a varlena header; only a
 * database whose encoding is not UTF-8 gets copies).  The core's scan lives
 * until the end of the scan, also on error: a reset callback on the scan's
 * memory context ends it.  ReScan rewinds: a table that came in one piece is
 * given again as it was (every pass of a nested loop sees the same rows), a
 * larger one is read again, and new parameter values start a new scan.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/sysattr.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "foreign/fdwapi.h"
#include "miscadmin.h"
#include "access/table.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/planmain.h"
#include "optimizer/restrictinfo.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/syscache.h"

#include "compat.h"
#include "shim.h"

PFS_MODULE_MAGIC;

/* Row estimate when the region cannot be opened at plan time. */
#define PFS_DEFAULT_ROWS 1000

/*
 * Cost of the reader visiting one record, in units of cpu_tuple_cost: a
 * consistent copy of a few cache lines and the pushed tests, cheaper than
 * forming a tuple.
 */
#define PFS_RECORD_COST 0.5

/* Bytes of rows a scan holds at a time (the core's pieces). */
#define PFS_PIECE_BYTES (1024 * 1024)

/* perfschema_fdw.pushdown: let the reader evaluate WHERE conditions. */
static bool pfs_pushdown = true;

/* perfschema_fdw.pushdown_aggregates: the scan computes count, sum, min and max itself */
static bool pfs_pushdown_aggregates = true;

/* Planner state, in baserel->fdw_private. */
typedef struct PfsPlanState
{
	PfsTableOptions opts;
	int			natts;
	int		   *attr_column;	/* attribute number - 1 -> region column, or -1 */
	bool		recheck;		/* pushed conditions are checked again: pending
								 * changes of the transaction may change rows */
} PfsPlanState;

/* Executor state, in node->fdw_state; allocated in cxt. */
typedef struct PfsScanState
{
	MemoryContext cxt;			/* this scan's context */
	MemoryContextCallback end_scan; /* ends the core's scan when cxt goes */
	PfsTableOptions opts;
	bool	   *wanted;			/* region columns returned */
	List	   *quals;			/* pushed quals (fdw_private descriptors) */
	List	   *operands;		/* their operands' ExprStates */
	bool		recheck;
	PfsCoreScan *scan;			/* NULL before the first row or after new params */
	bool		no_rows;		/* a pushed condition no row passes */
	const PfsCoreRowset *rows;	/* the current piece; NULL: fetch one */
	size_t		next;			/* next row of the piece */
	PfsCellMap	cells;			/* the pieces' cells as slot attributes */
	PfsOverlay *overlay;		/* the transaction's pending changes (modify.c) */
	Oid			relid;			/* the foreign table */
	PfsAggregates *aggregates;	/* the aggregates the scan computes, or NULL */
	bool		aggregated;		/* their row was returned */
	TupleTableSlot *row_slot;	/* rows of the table, to aggregate them one by one
								 * or to apply pending changes to them */
	int		   *scan_attnums;	/* compact tuples: each attribute's table
								 * attribute (0-based); NULL: the table's row type */
	bool		project_rows;	/* compact tuples made from row_slot's rows */
} PfsScanState;

PG_FUNCTION_INFO_V1(perfschema_fdw_handler);

PGDLLEXPORT void _PG_init(void);

static void pfsGetForeignRelSize(PlannerInfo *root, RelOptInfo *baserel,
								 Oid foreigntableid);
static void pfsGetForeignUpperPaths(PlannerInfo *root, UpperRelationKind stage,
									RelOptInfo *input_rel, RelOptInfo *output_rel,
									void *extra);
static void pfsGetForeignPaths(PlannerInfo *root, RelOptInfo *baserel,
							   Oid foreigntableid);
static ForeignScan *pfsGetForeignPlan(PlannerInfo *root, RelOptInfo *foreignrel,
									  Oid foreigntableid, ForeignPath *best_path,
									  List *tlist, List *scan_clauses,
									  Plan *outer_plan);
static void pfsBeginForeignScan(ForeignScanState *node, int eflags);
static TupleTableSlot *pfsIterateForeignScan(ForeignScanState *node);
static void pfsReScanForeignScan(ForeignScanState *node);
static bool pfsRecheckForeignScan(ForeignScanState *node, TupleTableSlot *slot);
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
	DefineCustomBoolVariable("perfschema_fdw.pushdown",
							 "Lets the reader evaluate simple WHERE conditions itself.",
							 "When off, the executor evaluates every condition on every row.",
							 &pfs_pushdown, true, PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("perfschema_fdw.pushdown_aggregates",
							 "Lets a scan compute count, sum, min and max itself when the reader tests every condition.",
							 "When off (or when perfschema_fdw.pushdown is off), an Agg node computes them from every row.",
							 &pfs_pushdown_aggregates, true, PGC_USERSET, 0, NULL, NULL, NULL);
	MarkGUCPrefixReserved("perfschema_fdw");
}

Datum
perfschema_fdw_handler(PG_FUNCTION_ARGS)
{
	FdwRoutine *routine = makeNode(FdwRoutine);

	routine->GetForeignRelSize = pfsGetForeignRelSize;
	routine->GetForeignPaths = pfsGetForeignPaths;
	routine->GetForeignPlan = pfsGetForeignPlan;
	routine->GetForeignUpperPaths = pfsGetForeignUpperPaths;
	routine->BeginForeignScan = pfsBeginForeignScan;
	routine->IterateForeignScan = pfsIterateForeignScan;
	routine->ReScanForeignScan = pfsReScanForeignScan;
	routine->RecheckForeignScan = pfsRecheckForeignScan;
	routine->EndForeignScan = pfsEndForeignScan;
	routine->ExplainForeignScan = pfsExplainForeignScan;
	routine->ImportForeignSchema = pfsImportForeignSchema;
	routine->AnalyzeForeignTable = pfsAnalyzeForeignTable;
	routine->AddForeignUpdateTargets = pfsAddForeignUpdateTargets;
	routine->PlanForeignModify = pfsPlanForeignModify;
	routine->BeginForeignModify = pfsBeginForeignModify;
	routine->ExecForeignInsert = pfsExecForeignInsert;
	routine->ExecForeignUpdate = pfsExecForeignUpdate;
	routine->ExecForeignDelete = pfsExecForeignDelete;
	routine->EndForeignModify = pfsEndForeignModify;
	routine->BeginForeignInsert = pfsBeginForeignInsert;
	routine->EndForeignInsert = pfsEndForeignInsert;
	routine->IsForeignRelUpdatable = pfsIsForeignRelUpdatable;
	routine->ExecForeignTruncate = pfsExecForeignTruncate;

	PG_RETURN_POINTER(routine);
}

/*
 * wanted_attnums
 *		The attributes the query reads: in the target list or in a clause the
 *		executor checks.  A whole-row reference reads them all.
 */
static List *
wanted_attnums(RelOptInfo *baserel, List *local_clauses)
{
	Bitmapset  *attrs = NULL;
	List	   *wanted = NIL;
	bool		whole_row;
	AttrNumber	attnum;

	pull_varattnos((Node *) baserel->reltarget->exprs, baserel->relid, &attrs);
	pull_varattnos((Node *) local_clauses, baserel->relid, &attrs);
	whole_row = bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, attrs);
	for (attnum = 1; attnum <= baserel->max_attr; attnum++)
	{
		if (whole_row ||
			bms_is_member(attnum - FirstLowInvalidHeapAttributeNumber, attrs))
			wanted = lappend_int(wanted, attnum);
	}
	return wanted;
}

/* Whether the reader can evaluate clause (and the setting lets it). */
static bool
pushable(PlannerInfo *root, RelOptInfo *baserel, Expr *clause, PfsPushedQual *q)
{
	PfsPlanState *state = baserel->fdw_private;

	return pfs_pushdown &&
		pfs_classify_clause(root, baserel, &state->opts, state->attr_column, state->natts,
							clause, q);
}

/*
 * pfsGetForeignRelSize
 *		The rows the region's table holds now (the reader's estimate from the
 *		provider's counters), times the selectivity of the conditions.  A
 *		region that cannot be opened now gets a default: the scan reports the
 *		error.
 */
static void
pfsGetForeignRelSize(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid)
{
	PfsPlanState *state = palloc0(sizeof(PfsPlanState));
	PfsCoreRegion *region;
	PfsCoreError err;
	double		rows = PFS_DEFAULT_ROWS;
	Relation	rel;

	pfs_get_table_options(foreigntableid, &state->opts);
	rel = table_open(foreigntableid, NoLock);
	state->natts = RelationGetDescr(rel)->natts;
	state->attr_column = palloc(sizeof(int) * Max(state->natts, 1));
	pfs_attr_columns(rel, &state->opts, state->attr_column);
	table_close(rel, NoLock);
	state->recheck = pfs_core_overlay_changes_values(state->opts.table);

	region = state->opts.directory
		? pfs_core_region_directory_get(state->opts.serverid, state->opts.region, &err)
		: pfs_core_region_get(state->opts.serverid, state->opts.region, &err);
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
 * scan_cost
 *		The reader visits every record; the clauses it does not test cost the
 *		executor on the rows the pushed ones let through; every row returned
 *		costs a tuple.
 */
static void
scan_cost(PlannerInfo *root, RelOptInfo *baserel, List *clauses, double rows,
		  Cost *startup_cost, Cost *total_cost)
{
	PfsPlanState *state = baserel->fdw_private;
	List	   *pushed = NIL;
	List	   *local = NIL;
	ListCell   *lc;
	QualCost	local_cost;
	double		passed;

	foreach(lc, clauses)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		PfsPushedQual q;

		if (pushable(root, baserel, rinfo->clause, &q))
		{
			pushed = lappend(pushed, rinfo);
			if (q.exact && !state->recheck)
				continue;
		}
		local = lappend(local, rinfo);
	}
	cost_qual_eval(&local_cost, local, root);
	passed = clamp_row_est(baserel->tuples *
						   clauselist_selectivity(root, pushed, 0, JOIN_INNER, NULL));
	*startup_cost = local_cost.startup;
	*total_cost = *startup_cost +
		baserel->tuples * cpu_tuple_cost * PFS_RECORD_COST +
		passed * local_cost.per_tuple + rows * cpu_tuple_cost;
}

/* Matches the equivalence-class members that are this attribute of baserel. */
static bool
ec_member_is_attr(PlannerInfo *root, RelOptInfo *baserel, EquivalenceClass *ec,
				  EquivalenceMember *em, void *arg)
{
	Var		   *var = (Var *) em->em_expr;

	return IsA(var, Var) && var->varno == baserel->relid && var->varlevelsup == 0 &&
		var->varattno == *(AttrNumber *) arg;
}

/* A path probing the reader with the value of a column of other relations. */
static void
add_parameterized_path(PlannerInfo *root, RelOptInfo *baserel, RestrictInfo *rinfo)
{
	PfsPushedQual q;
	Relids		required_outer;
	ParamPathInfo *ppi;
	Cost		startup_cost;
	Cost		total_cost;

	if (!pushable(root, baserel, rinfo->clause, &q))
		return;
	required_outer = bms_union(bms_difference(rinfo->clause_relids, baserel->relids),
							   baserel->lateral_relids);
	if (bms_is_empty(required_outer))
		return;
	ppi = get_baserel_parampathinfo(root, baserel, required_outer);
	scan_cost(root, baserel, list_concat_copy(baserel->baserestrictinfo, ppi->ppi_clauses),
			  ppi->ppi_rows, &startup_cost, &total_cost);
	add_path(baserel, (Path *)
			 pfs_create_foreignscan_path(root, baserel, ppi->ppi_rows,
										 startup_cost, total_cost, required_outer, NIL));
}

/*
 * pfsGetForeignPaths
 *		A plain scan, and parameterized scans for the join clauses the reader
 *		can test (a nested loop then has the reader return only the rows that
 *		match each outer row).
 */
static void
pfsGetForeignPaths(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid)
{
	PfsPlanState *state = baserel->fdw_private;
	Cost		startup_cost;
	Cost		total_cost;
	ListCell   *lc;
	AttrNumber	attnum;

	scan_cost(root, baserel, baserel->baserestrictinfo, baserel->rows,
			  &startup_cost, &total_cost);
	/* parameterized by the relations a LATERAL reference needs, as file_fdw's */
	add_path(baserel, (Path *)
			 pfs_create_foreignscan_path(root, baserel, baserel->rows, startup_cost, total_cost,
										 baserel->lateral_relids, NIL));
	if (!pfs_pushdown)
		return;

	foreach(lc, baserel->joininfo)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);

		if (join_clause_is_movable_to(rinfo, baserel))
			add_parameterized_path(root, baserel, rinfo);
	}
	if (!baserel->has_eclass_joins)
		return;
	for (attnum = 1; attnum <= state->natts; attnum++)
	{
		List	   *clauses;

		if (state->attr_column[attnum - 1] < 0)
			continue;
		clauses = generate_implied_equalities_for_column(root, baserel, ec_member_is_attr,
														 &attnum, baserel->lateral_referencers);
		foreach(lc, clauses)
			add_parameterized_path(root, baserel, lfirst_node(RestrictInfo, lc));
	}
}

/*
 * split_clauses
 *		The clauses the reader can test go to it (*quals, their operands in
 *		*operands; *pushed: the clauses themselves); the executor keeps the
 *		others (*local), and the pushed ones it must check again.
 */
static void
split_clauses(PlannerInfo *root, RelOptInfo *baserel, List *clauses,
			  List **local, List **quals, List **operands, List **pushed)
{
	PfsPlanState *state = baserel->fdw_private;
	ListCell   *lc;

	*local = *quals = *operands = *pushed = NIL;
	foreach(lc, clauses)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		PfsPushedQual q;

		if (rinfo->pseudoconstant)
			continue;			/* a gating Result checks it */
		if (pushable(root, baserel, rinfo->clause, &q))
		{
			int			operand_index = -1;

			if (q.operand != NULL)
			{
				*operands = lappend(*operands, q.operand);
				operand_index = list_length(*operands) - 1;
			}
			*quals = lappend(*quals, pfs_pushed_qual_to_list(&q, operand_index));
			*pushed = lappend(*pushed, rinfo->clause);
			if (q.exact && !state->recheck)
				continue;
		}
		*local = lappend(*local, rinfo->clause);
	}
}

/*
 * pfsGetForeignUpperPaths
 *		A scan that returns the aggregates of a query without GROUP BY or
 *		HAVING, when the reader tests every condition of the one foreign table
 *		it reads and can compute every aggregate (aggregate.c).  Not for the
 *		tables a transaction can change (their conditions are checked again).
 */
static void
pfsGetForeignUpperPaths(PlannerInfo *root, UpperRelationKind stage, RelOptInfo *input_rel,
						RelOptInfo *output_rel, void *extra)
{
	PfsPlanState *state = input_rel->fdw_private;
	Query	   *parse = root->parse;
	/* the grouped relation's target, as postgres_fdw takes it (the same here: one base relation) */
	PathTarget *target = output_rel->reltarget;
	List	   *aggregates;
	List	   *tlist;
	List	   *attnums;
	ListCell   *lc;
	Cost		startup_cost;
	Cost		total_cost;

	if (stage != UPPERREL_GROUP_AGG || !pfs_pushdown || !pfs_pushdown_aggregates ||
		output_rel->fdw_private != NULL)
		return;
	if (input_rel->reloptkind != RELOPT_BASEREL || state == NULL || state->recheck ||
		parse->groupClause != NIL || parse->groupingSets != NIL || parse->havingQual != NULL ||
		root->hasPseudoConstantQuals || target == NULL)
		return;
	foreach(lc, input_rel->baserestrictinfo)
	{
		PfsPushedQual q;

		if (!pushable(root, input_rel, lfirst_node(RestrictInfo, lc)->clause, &q) || !q.exact)
			return;
	}
	aggregates = pfs_pushable_aggregates(input_rel, state->attr_column, state->natts, target,
										 &tlist, &attnums);
	if (aggregates == NIL)
		return;
	output_rel->fdw_private = state; /* considered once */

	/* the reader's records, and one row: no tuple per row, no Agg node */
	scan_cost(root, input_rel, input_rel->baserestrictinfo, 1, &startup_cost, &total_cost);
	add_path(output_rel, (Path *)
			 pfs_create_foreign_upper_path(root, output_rel, target, total_cost, total_cost,
										   list_make4(makeInteger(input_rel->relid), attnums,
													  aggregates, tlist)));
}

/*
 * pfsGetForeignPlan
 *		fdw_private: the attributes the query reads, the pushed quals, and
 *		for a scan that computes aggregates, their descriptors (its tuple is
 *		fdw_scan_tlist: the aggregates).  A scan of the table has compact
 *		tuples (fdw_scan_tlist: the attributes it reads) where it can
 *		(scan_tlist.c).
 */
static ForeignScan *
pfsGetForeignPlan(PlannerInfo *root, RelOptInfo *foreignrel, Oid foreigntableid,
				  ForeignPath *best_path, List *tlist, List *scan_clauses,
				  Plan *outer_plan)
{
	List	   *local;
	List	   *quals;
	List	   *operands;
	List	   *pushed;
	List	   *wanted;
	List	   *scan_tlist;

	if (IS_UPPER_REL(foreignrel))
	{
		List	   *private = best_path->fdw_private;
		RelOptInfo *baserel = root->simple_rel_array[intVal(linitial(private))];

		split_clauses(root, baserel, baserel->baserestrictinfo, &local, &quals, &operands, &pushed);
		if (local != NIL)		/* pfsGetForeignUpperPaths checked every clause */
			elog(ERROR, "perfschema_fdw: a condition of an aggregated scan is not pushed");
		return make_foreignscan(tlist, NIL, 0, operands,
								list_make3(lsecond(private), quals, lthird(private)),
								lfourth(private), NIL, outer_plan);
	}
	split_clauses(root, foreignrel, scan_clauses, &local, &quals, &operands, &pushed);
	wanted = wanted_attnums(foreignrel, local);
	scan_tlist = pfs_compact_scan_tlist(root, foreignrel, tlist, local, wanted);

	/*
	 * EvalPlanQual replays a row of this table through its row mark: it must
	 * still pass the conditions the reader tested, join clauses included
	 * (the outer row may have changed).  A scan with compact tuples has no row
	 * mark, and its tuples may lack the columns these clauses read.
	 */
	return make_foreignscan(tlist, local, foreignrel->relid, operands, list_make2(wanted, quals),
							scan_tlist, scan_tlist == NIL ? pushed : NIL, outer_plan);
}

static void
end_core_scan(void *arg)
{
	PfsScanState *state = arg;

	pfs_core_scan_end(state->scan);
	state->scan = NULL;
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
 * compact_core_attr
 *		core_attr (each region column's table attribute, or -1) as attributes
 *		of compact tuples whose attribute i is table attribute scan_attnums[i].
 */
static int *
compact_core_attr(const int *core_attr, int ncolumns, const int *scan_attnums, int natts)
{
	int		   *compact = palloc(sizeof(int) * Max(ncolumns, 1));
	int			c;
	int			i;

	for (c = 0; c < ncolumns; c++)
	{
		compact[c] = -1;
		for (i = 0; i < natts && core_attr[c] >= 0; i++)
		{
			if (scan_attnums[i] == core_attr[c])
				compact[c] = i;
		}
	}
	return compact;
}

/*
 * pfsBeginForeignScan
 *		Map the columns and prepare the operands of the pushed quals; the
 *		reader starts at the first row (parameters have their values then).
 */
static void
pfsBeginForeignScan(ForeignScanState *node, int eflags)
{
	ForeignScan *plan = (ForeignScan *) node->ss.ps.plan;
	Relation	rel = node->ss.ss_currentRelation;
	Relation	opened = NULL;
	MemoryContext cxt;
	MemoryContext old;
	PfsScanState *state;
	int		   *core_attr;
	int			ncolumns;
	int			natts;

	cxt = AllocSetContextCreate(node->ss.ps.state->es_query_cxt,
								"perfschema_fdw scan", ALLOCSET_SMALL_SIZES);
	state = MemoryContextAllocZero(cxt, sizeof(PfsScanState));
	state->cxt = cxt;
	state->end_scan.func = end_core_scan;
	state->end_scan.arg = state;
	MemoryContextRegisterResetCallback(cxt, &state->end_scan);
	node->fdw_state = state;

	old = MemoryContextSwitchTo(cxt);
	if (rel == NULL)
	{
		/* a scan computing aggregates (scanrelid 0): its one foreign table */
		RangeTblEntry *rte = exec_rt_fetch(bms_next_member(pfs_scan_base_relids(plan), -1),
										   node->ss.ps.state);

		rel = opened = table_open(rte->relid, NoLock);
	}
	state->relid = RelationGetRelid(rel);
	pfs_get_table_options(state->relid, &state->opts);
	state->quals = lsecond(plan->fdw_private);
	if (list_length(plan->fdw_private) > 2)
		state->aggregates = pfs_aggregates_begin(lthird(plan->fdw_private));
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
	{
		if (opened != NULL)
			table_close(opened, NoLock);
		MemoryContextSwitchTo(old);
		return;
	}
	state->operands = ExecInitExprList(plan->fdw_exprs, (PlanState *) node);
	state->recheck = pfs_core_overlay_changes_values(state->opts.table);

	ncolumns = pfs_core_column_count(state->opts.table);
	state->wanted = palloc(sizeof(bool) * Max(ncolumns, 1));
	core_attr = palloc(sizeof(int) * Max(ncolumns, 1));
	map_columns(rel, &state->opts, linitial(plan->fdw_private), state->wanted, core_attr);
	state->overlay = pfs_overlay_begin(node, &state->opts, state->wanted, core_attr);
	state->scan_attnums = pfs_scan_attnums(plan, &natts);
	/* compact tuples: pending changes apply to whole rows, projected after */
	state->project_rows = state->scan_attnums != NULL && state->overlay != NULL;
	if (state->scan_attnums != NULL && !state->project_rows)
		pfs_cell_map(state->opts.table, state->wanted,
					 compact_core_attr(core_attr, ncolumns, state->scan_attnums, natts),
					 &state->cells);
	else
		pfs_cell_map(state->opts.table, state->wanted, core_attr, &state->cells);
	if (state->aggregates != NULL || state->project_rows)
		state->row_slot = MakeSingleTupleTableSlot(CreateTupleDescCopy(RelationGetDescr(rel)),
												   &TTSOpsVirtual);
	if (opened != NULL)
		table_close(opened, NoLock);
	MemoryContextSwitchTo(old);
}

/*
 * start_core_scan
 *		Evaluate the operands of the pushed quals and start the reader.  While
 *		the transaction has pending changes that may change rows, the reader
 *		tests nothing: the executor checks every condition after the overlay.
 */
static void
start_core_scan(ForeignScanState *node)
{
	PfsScanState *state = node->fdw_state;
	ExprContext *econtext = node->ss.ps.ps_ExprContext;
	MemoryContext old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
	List	   *quals = (state->overlay != NULL && state->recheck) ? NIL : state->quals;
	PfsCoreQual *core_quals = palloc0(sizeof(PfsCoreQual) * Max(list_length(quals), 1));
	int			nquals = 0;
	ListCell   *lc;
	PfsCoreRegion *region;
	PfsCoreError err;

	state->no_rows = false;
	foreach(lc, quals)
	{
		PfsPushedQual q;
		int			operand_index;
		Datum		value = (Datum) 0;
		bool		isnull = false;

		pfs_pushed_qual_from_list(lfirst(lc), &q, &operand_index);
		if (operand_index >= 0)
			value = ExecEvalExpr(list_nth(state->operands, operand_index), econtext, &isnull);
		if (!pfs_make_core_qual(&q, value, isnull, &core_quals[nquals++]))
			state->no_rows = true;
	}
	MemoryContextSwitchTo(old);
	if (state->no_rows)
		return;

	region = pfs_region_of(&state->opts);
	state->scan = pfs_core_scan_begin(region, state->opts.table, state->wanted,
									  core_quals, nquals, VARHDRSZ, PFS_PIECE_BYTES, &err);
	if (state->scan == NULL)
		pfs_report_core_error(&err);
	pfs_report_scan_warnings(state->scan);
}

/*
 * next_copied_row
 *		Return the next row as a virtual tuple; columns the query does not
 *		read are NULL.
 */
static pg_attribute_always_inline TupleTableSlot *
next_copied_row(ForeignScanState *node, TupleTableSlot *slot)
{
	PfsScanState *state = node->fdw_state;
	const PfsCoreRowset *rows;

	ExecClearTuple(slot);
	if (state->scan == NULL && !state->no_rows)
		start_core_scan(node);
	if (state->no_rows)
		return slot;
	while (state->rows == NULL || state->next >= state->rows->nrows)
	{
		if (state->rows != NULL && state->rows->last)
			return slot;
		state->rows = pfs_next_piece(state->scan);
		state->next = 0;
	}
	rows = state->rows;
	CHECK_FOR_INTERRUPTS();

	pfs_row_values(&state->cells, rows, state->next, slot->tts_tupleDescriptor->natts,
				   slot->tts_values, slot->tts_isnull);
	ExecStoreVirtualTuple(slot);
	state->next++;
	return slot;
}

/*
 * next_row
 *		The next copied row, with the transaction's pending setup changes
 *		applied (modify.c): rows it deleted are skipped, rows it inserted
 *		come after the copied ones.
 */
static pg_attribute_always_inline TupleTableSlot *
next_row(ForeignScanState *node, TupleTableSlot *into)
{
	PfsScanState *state = node->fdw_state;

	for (;;)
	{
		TupleTableSlot *slot = next_copied_row(node, into);

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
 * aggregate_row
 *		The one row of a scan that computes aggregates.  Without pending
 *		changes, from the core's pieces as they come (count(*) adds up their
 *		sizes); with them, row by row through the overlay, in the per-tuple
 *		context (reset after each row).
 */
static TupleTableSlot *
aggregate_into(ForeignScanState *node, TupleTableSlot *slot)
{
	PfsScanState *state = node->fdw_state;

	ExecClearTuple(slot);
	pfs_aggregates_reset(state->aggregates);
	if (state->overlay == NULL)
	{
		if (state->scan == NULL && !state->no_rows)
			start_core_scan(node);
		while (!state->no_rows && (state->rows == NULL || !state->rows->last))
		{
			state->rows = pfs_next_piece(state->scan);
			CHECK_FOR_INTERRUPTS();
			pfs_aggregates_add_piece(state->aggregates, &state->cells, state->rows);
		}
	}
	else
	{
		/* the current context: ForeignNext and ForeignRecheck switch to it */
		MemoryContext per_row = node->ss.ps.ps_ExprContext->ecxt_per_tuple_memory;

		while (!TupIsNull(next_row(node, state->row_slot)))
		{
			pfs_aggregates_add_row(state->aggregates, state->row_slot);
			ExecClearTuple(state->row_slot);
			MemoryContextReset(per_row);
		}
	}
	state->aggregated = true;
	pfs_aggregates_store(state->aggregates, slot);
	return ExecStoreVirtualTuple(slot);
}

static TupleTableSlot *
aggregate_row(ForeignScanState *node)
{
	PfsScanState *state = node->fdw_state;

	if (state->aggregated)
		return ExecClearTuple(node->ss.ss_ScanTupleSlot);
	return aggregate_into(node, node->ss.ss_ScanTupleSlot);
}

/*
 * next_projected_row
 *		A compact tuple from the next row of the table with the transaction's
 *		pending changes applied.
 */
static TupleTableSlot *
next_projected_row(ForeignScanState *node, TupleTableSlot *slot)
{
	PfsScanState *state = node->fdw_state;
	TupleTableSlot *row = next_row(node, state->row_slot);
	int			natts = slot->tts_tupleDescriptor->natts;
	int			i;

	ExecClearTuple(slot);
	if (TupIsNull(row))
		return slot;
	for (i = 0; i < natts; i++)
	{
		slot->tts_values[i] = row->tts_values[state->scan_attnums[i]];
		slot->tts_isnull[i] = row->tts_isnull[state->scan_attnums[i]];
	}
	return ExecStoreVirtualTuple(slot);
}

static TupleTableSlot *
pfsIterateForeignScan(ForeignScanState *node)
{
	PfsScanState *state = node->fdw_state;

	if (unlikely(state->aggregates != NULL))
		return aggregate_row(node);
	if (unlikely(state->project_rows))
		return next_projected_row(node, node->ss.ss_ScanTupleSlot);
	return next_row(node, node->ss.ss_ScanTupleSlot);
}

/*
 * pfsReScanForeignScan
 *		Start again: with new operand values, a new scan of the reader;
 *		otherwise the same scan rewound.
 */
static void
pfsReScanForeignScan(ForeignScanState *node)
{
	PfsScanState *state = node->fdw_state;

	if (node->ss.ps.chgParam != NULL && state->operands != NIL)
	{
		pfs_core_scan_end(state->scan);
		state->scan = NULL;
		state->no_rows = false;
	}
	else
		pfs_core_scan_rewind(state->scan);
	state->rows = NULL;
	state->next = 0;
	state->aggregated = false;
	pfs_overlay_rewind(state->overlay);
}

/*
 * pfsRecheckForeignScan
 *		EvalPlanQual (a row an UPDATE waited for changed): a scan of the table
 *		keeps the row replayed through its row mark, which the executor then
 *		tests with fdw_recheck_quals (the conditions the reader tested, join
 *		clauses with the new outer values included); a scan computing
 *		aggregates (scanrelid 0) must store its one row in slot itself,
 *		computed again from the start.
 */
static bool
pfsRecheckForeignScan(ForeignScanState *node, TupleTableSlot *slot)
{
	PfsScanState *state = node->fdw_state;

	if (state->aggregates == NULL)
		return true;
	if (state->scan != NULL)
		pfs_core_scan_rewind(state->scan);
	state->rows = NULL;
	pfs_overlay_rewind(state->overlay);
	aggregate_into(node, slot);
	return true;
}

/*
 * pfsEndForeignScan
 *		End the core's scan (through the context's reset callback).
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
 *		Show the region file (or directory), the table, and the conditions the
 *		reader tests.
 */
static void
pfsExplainForeignScan(ForeignScanState *node, ExplainState *es)
{
	PfsScanState *state = node->fdw_state;
	ForeignScan *plan = (ForeignScan *) node->ss.ps.plan;
	List	   *context;
	StringInfoData buf;
	ListCell   *lc;

	ExplainPropertyText(state->opts.directory ? "Region Directory" : "Region",
						state->opts.region, es);
	ExplainPropertyText("Region Table", state->opts.table_name, es);
	if (state->aggregates != NULL)
		ExplainPropertyText("Reader Aggregates",
							pfs_aggregates_describe(lthird(plan->fdw_private), state->relid), es);
	if (state->quals == NIL)
		return;

	context = set_deparse_context_plan(es->deparse_cxt, (Plan *) plan, NIL);
	initStringInfo(&buf);
	foreach(lc, state->quals)
	{
		PfsPushedQual q;
		int			operand_index;

		pfs_pushed_qual_from_list(lfirst(lc), &q, &operand_index);
		if (buf.len > 0)
			appendStringInfoString(&buf, " AND ");
		appendStringInfo(&buf, "(%s %s", pfs_core_column_name(state->opts.table, q.column),
						 pfs_qual_op_name(q.op));
		if (q.op == PFS_QUAL_PREFIX)
			appendStringInfo(&buf, " %s", quote_literal_cstr(psprintf("%s%%", q.prefix)));
		else if (operand_index >= 0)
			appendStringInfo(&buf, q.array ? " (%s)" : " %s",
							 deparse_expression(list_nth(plan->fdw_exprs, operand_index),
												context, false, false));
		appendStringInfoChar(&buf, ')');
	}
	ExplainPropertyText("Reader Filter", buf.data, es);
}
