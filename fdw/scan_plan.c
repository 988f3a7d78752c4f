/*-------------------------------------------------------------------------
 *
 * scan_plan.c
 *	  Planning of perfschema_fdw scans: the row estimate, the paths, the
 *	  path computing aggregates, and the plan (scan.c executes it).
 *
 * The planner pushes the simple WHERE conditions it can (pushdown.c) into
 * the reader, also as parameterized paths for joins, and leaves the
 * executor only what the reader cannot test.  A query without GROUP BY
 * whose conditions the reader tests gets a scan that computes its
 * aggregates (aggregate.c).  A scan returns only the columns the query
 * reads where it can (scan_tlist.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/sysattr.h"
#include "access/table.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/planmain.h"
#include "optimizer/restrictinfo.h"
#include "utils/rel.h"

#include "compat.h"
#include "shim.h"

/* Row estimate when the region cannot be opened at plan time. */
#define PFS_DEFAULT_ROWS 1000

/*
 * Cost of the reader visiting one record, in units of cpu_tuple_cost: a
 * consistent copy of a few cache lines and the pushed tests, cheaper than
 * forming a tuple.
 */
#define PFS_RECORD_COST 0.5

/* Planner state, in baserel->fdw_private. */
typedef struct PfsPlanState
{
	PfsTableOptions opts;
	int			natts;
	int		   *attr_column;	/* attribute number - 1 -> region column, or -1 */
	bool		recheck;		/* pushed conditions are checked again: pending
								 * changes of the transaction may change rows */
} PfsPlanState;

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
void
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

	region = pfs_region_lookup(&state->opts, &err);
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
void
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
void
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
ForeignScan *
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
	 * (the outer row may have changed).  Only a relation with a row mark or a
	 * target of UPDATE or DELETE is replayed (and its scan has no compact
	 * tuples, which may lack the columns these clauses read); for the others
	 * the list would be compiled at every execution and never run.
	 */
	return make_foreignscan(tlist, local, foreignrel->relid, operands, list_make2(wanted, quals),
							scan_tlist,
							pfs_scan_may_be_rechecked(root, foreignrel) ? pushed : NIL,
							outer_plan);
}
