/*-------------------------------------------------------------------------
 *
 * scan_tlist.c
 *	  Compact scan tuples: a scan of a foreign table whose tuples hold only
 *	  the columns the query reads (fdw_scan_tlist), in the order of its
 *	  target list.  A plain SELECT of some columns then needs no projection,
 *	  and a row costs a Datum per column read rather than per column of the
 *	  table (bench/fdw_vs_heap.sh's "where" returns 3 columns of 22).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/sysattr.h"
#include "nodes/makefuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/prep.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"

#include "compat.h"
#include "shim.h"

/* Whether attrs (pull_varattnos' offsets) holds a whole row or a system column. */
static bool
reads_whole_row_or_system_column(Bitmapset *attrs)
{
	int			x = -1;

	while ((x = bms_next_member(attrs, x)) >= 0)
	{
		if (x + FirstLowInvalidHeapAttributeNumber <= 0)
			return true;
	}
	return false;
}

/*
 * Whether scan_tlist is every attribute of the table, in the table's order (a
 * SELECT *): compact tuples would be the table's own, and the executor would build
 * their descriptor from the list at every start of the plan, where it takes the
 * relation's as it is.
 */
static bool
is_whole_row_in_order(List *scan_tlist, AttrNumber max_attr)
{
	ListCell   *lc;
	AttrNumber	attno = 0;

	if (list_length(scan_tlist) != max_attr)
		return false;
	foreach(lc, scan_tlist)
	{
		if (castNode(Var, lfirst_node(TargetEntry, lc)->expr)->varattno != ++attno)
			return false;
	}
	return true;
}

/*
 * pfs_scan_may_be_rechecked
 *		Whether EvalPlanQual may replay a row of rel through this scan: rel is
 *		a target of UPDATE or DELETE, or has a row mark.  A relation of neither
 *		kind is never replayed (the executor reads it normally, or the row mark
 *		of a subquery holding it replays the subquery's row).
 */
bool
pfs_scan_may_be_rechecked(PlannerInfo *root, RelOptInfo *rel)
{
	return rel->relid == root->parse->resultRelation ||
		bms_is_member(rel->relid, root->all_result_relids) ||
		get_plan_rowmark(root->rowMarks, rel->relid) != NULL;
}

/*
 * pfs_compact_scan_tlist
 *		The fdw_scan_tlist of a base relation's scan that reads the attributes
 *		`wanted` (ascending attnums) and returns tlist: the Vars of tlist first,
 *		in its order, then the other wanted attributes (read by the conditions
 *		the executor checks).  NIL, for tuples of the table's row type, when
 *		the executor may store a row of the table in the scan's slot (the
 *		relation is a target of UPDATE or DELETE, or has a row mark), when the
 *		query reads a whole row or a system column, when tlist reads
 *		columns the scan does not return (a physical target list), or when the
 *		list would be the table's attributes in their order.
 */
List *
pfs_compact_scan_tlist(PlannerInfo *root, RelOptInfo *rel, List *tlist, List *local_clauses,
					   List *wanted)
{
	RangeTblEntry *rte = planner_rt_fetch(rel->relid, root);
	Bitmapset  *attrs = NULL;
	Bitmapset  *wanted_set = NULL;
	Bitmapset  *added = NULL;
	List	   *scan_tlist = NIL;
	ListCell   *lc;

	if (pfs_scan_may_be_rechecked(root, rel))
		return NIL;
	pull_varattnos((Node *) tlist, rel->relid, &attrs);
	pull_varattnos((Node *) rel->reltarget->exprs, rel->relid, &attrs);
	pull_varattnos((Node *) local_clauses, rel->relid, &attrs);
	if (reads_whole_row_or_system_column(attrs))
		return NIL;
	foreach(lc, wanted)
		wanted_set = bms_add_member(wanted_set, lfirst_int(lc) - FirstLowInvalidHeapAttributeNumber);
	if (!bms_is_subset(attrs, wanted_set))
		return NIL;

	foreach(lc, tlist)
	{
		Var		   *var = (Var *) lfirst_node(TargetEntry, lc)->expr;

		if (!IsA(var, Var) || var->varno != rel->relid || var->varlevelsup != 0 ||
			bms_is_member(var->varattno, added))
			continue;
		added = bms_add_member(added, var->varattno);
		scan_tlist = lappend(scan_tlist, makeTargetEntry((Expr *) copyObject(var),
														 list_length(scan_tlist) + 1, NULL, false));
	}
	foreach(lc, wanted)
	{
		AttrNumber	attno = (AttrNumber) lfirst_int(lc);
		Oid			type;
		int32		typmod;
		Oid			collation;

		if (bms_is_member(attno, added))
			continue;
		get_atttypetypmodcoll(rte->relid, attno, &type, &typmod, &collation);
		added = bms_add_member(added, attno);
		scan_tlist = lappend(scan_tlist,
							 makeTargetEntry((Expr *) makeVar(rel->relid, attno, type, typmod, collation, 0),
											 list_length(scan_tlist) + 1, NULL, false));
	}
	if (is_whole_row_in_order(scan_tlist, rel->max_attr))
		return NIL;
	return scan_tlist;
}

/*
 * pfs_scan_attnums
 *		For a scan with compact tuples, the table attribute (0-based) of each
 *		attribute of its tuples; NULL for tuples of the table's row type.
 */
int *
pfs_scan_attnums(const ForeignScan *plan, int *natts)
{
	int		   *attnums;
	ListCell   *lc;
	int			i = 0;

	*natts = list_length(plan->fdw_scan_tlist);
	if (plan->scan.scanrelid == 0 || *natts == 0)
		return NULL;
	attnums = palloc(sizeof(int) * *natts);
	foreach(lc, plan->fdw_scan_tlist)
		attnums[i++] = castNode(Var, lfirst_node(TargetEntry, lc)->expr)->varattno - 1;
	return attnums;
}
