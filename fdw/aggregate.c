/*-------------------------------------------------------------------------
 *
 * aggregate.c
 *	  Aggregates a scan computes itself: count(*), count(column), and sum,
 *	  min and max of a bigint column, in a query without GROUP BY or HAVING
 *	  whose every condition the reader tests.  The scan then hands the
 *	  executor one row instead of every row to an Agg node: count(*) of a
 *	  million waits takes the reader's pieces, not a million tuples.
 *
 *	  Planning (pfs_pushable_aggregates) decides which aggregates qualify;
 *	  execution (pfs_aggregates_*) accumulates them from the core's pieces,
 *	  or row by row when the transaction's pending changes apply to the
 *	  rows (overlay.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_aggregate.h"
#include "executor/tuptable.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/tlist.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"

#include "compat.h"
#include "shim.h"

/* What one pushed aggregate computes. */
typedef enum PfsAggregateKind
{
	PFS_AGG_COUNT_ROWS,			/* count(*) */
	PFS_AGG_COUNT,				/* count(column): the non-NULL values */
	PFS_AGG_SUM,				/* sum(bigint column) */
	PFS_AGG_MIN,				/* min(bigint column) */
	PFS_AGG_MAX					/* max(bigint column) */
} PfsAggregateKind;

static const char *const aggregate_names[] = {"count", "count", "sum", "min", "max"};

typedef struct PfsAggregate
{
	PfsAggregateKind kind;
	AttrNumber	attnum;			/* the column it reads (0: count(*)) */
	int64		count;			/* rows, or non-NULL values */
	int128		sum;
	int64		extreme;		/* min or max so far (when count > 0) */
} PfsAggregate;

struct PfsAggregates
{
	int			n;
	PfsAggregate *items;
};

/* The kind of aggref when the scan can compute it; false if not. */
static bool
aggregate_kind(Aggref *aggref, Index relid, const int *attr_column, int natts,
			   PfsAggregateKind *kind, AttrNumber *attnum)
{
	TargetEntry *arg;
	Var		   *var;

	if (aggref->aggdistinct != NIL || aggref->aggorder != NIL || aggref->aggfilter != NULL ||
		aggref->aggkind != AGGKIND_NORMAL || aggref->agglevelsup != 0 ||
		aggref->aggsplit != AGGSPLIT_SIMPLE || aggref->aggvariadic)
		return false;
	if (aggref->aggstar)
	{
		*kind = PFS_AGG_COUNT_ROWS;
		*attnum = 0;
		return aggref->aggfnoid == F_COUNT_;
	}
	if (list_length(aggref->args) != 1)
		return false;
	arg = linitial_node(TargetEntry, aggref->args);
	var = (Var *) arg->expr;
	if (!IsA(var, Var) || var->varno != relid || var->varlevelsup != 0 ||
		var->varattno <= 0 || var->varattno > natts || attr_column[var->varattno - 1] < 0)
		return false;
	*attnum = var->varattno;
	switch (aggref->aggfnoid)
	{
		case F_COUNT_ANY:
			*kind = PFS_AGG_COUNT;
			return true;
		case F_SUM_INT8:
			*kind = PFS_AGG_SUM;
			return true;
		case F_MIN_INT8:
			*kind = PFS_AGG_MIN;
			return true;
		case F_MAX_INT8:
			*kind = PFS_AGG_MAX;
			return true;
		default:
			return false;
	}
}

/*
 * pfs_pushable_aggregates
 *		When the scan of baserel can compute every aggregate of the grouping
 *		target (expressions over aggregates stay with the executor): their
 *		descriptors for fdw_private, *tlist the scan's fdw_scan_tlist (one
 *		entry per distinct aggregate, the descriptors' order), *attnums the
 *		attributes they read.  NIL when it cannot.
 */
List *
pfs_pushable_aggregates(RelOptInfo *baserel, const int *attr_column, int natts,
						PathTarget *target, List **tlist, List **attnums)
{
	List	   *descriptors = NIL;
	Bitmapset  *read = NULL;
	ListCell   *lc;
	int			attnum;

	*tlist = NIL;
	*attnums = NIL;
	foreach(lc, target->exprs)
	{
		List	   *found = pull_var_clause(lfirst(lc), PVC_INCLUDE_AGGREGATES |
											PVC_RECURSE_PLACEHOLDERS);
		ListCell   *lf;

		foreach(lf, found)
		{
			Aggref	   *aggref = lfirst(lf);
			PfsAggregateKind kind;
			AttrNumber	arg;

			if (!IsA(aggref, Aggref))
				return NIL;		/* a column outside any aggregate */
			if (!aggregate_kind(aggref, baserel->relid, attr_column, natts, &kind, &arg))
				return NIL;
			if (tlist_member((Expr *) aggref, *tlist) != NULL)
				continue;
			*tlist = lappend(*tlist, makeTargetEntry((Expr *) aggref, list_length(*tlist) + 1,
													 NULL, false));
			descriptors = lappend(descriptors, list_make2_int(kind, arg));
			if (arg > 0)
				read = bms_add_member(read, arg);
		}
	}
	attnum = -1;
	while ((attnum = bms_next_member(read, attnum)) >= 0)
		*attnums = lappend_int(*attnums, attnum);
	return descriptors;
}

/* The aggregates of descriptors, as EXPLAIN shows them: "count(*), sum(timer_wait)". */
char *
pfs_aggregates_describe(List *descriptors, Oid relid)
{
	StringInfoData buf;
	ListCell   *lc;

	initStringInfo(&buf);
	foreach(lc, descriptors)
	{
		PfsAggregateKind kind = linitial_int(lfirst(lc));
		AttrNumber	attnum = lsecond_int(lfirst(lc));

		appendStringInfo(&buf, "%s%s(%s)", buf.len > 0 ? ", " : "", aggregate_names[kind],
						 attnum == 0 ? "*" : quote_identifier(get_attname(relid, attnum, false)));
	}
	return buf.data;
}

PfsAggregates *
pfs_aggregates_begin(List *descriptors)
{
	PfsAggregates *a = palloc0(sizeof(PfsAggregates));
	ListCell   *lc;

	a->items = palloc0(sizeof(PfsAggregate) * Max(list_length(descriptors), 1));
	foreach(lc, descriptors)
	{
		PfsAggregate *item = &a->items[a->n++];

		item->kind = linitial_int(lfirst(lc));
		item->attnum = lsecond_int(lfirst(lc));
	}
	return a;
}

void
pfs_aggregates_reset(PfsAggregates *a)
{
	int			i;

	for (i = 0; i < a->n; i++)
	{
		a->items[i].count = 0;
		a->items[i].sum = 0;
		a->items[i].extreme = 0;
	}
}

/* One non-NULL value of item's column. */
static inline void
add_value(PfsAggregate *item, int64 value)
{
	if (item->count == 0 ||
		(item->kind == PFS_AGG_MIN && value < item->extreme) ||
		(item->kind == PFS_AGG_MAX && value > item->extreme))
		item->extreme = value;
	item->sum += value;
	item->count++;
}

/*
 * pfs_aggregates_add_piece
 *		Every row of a piece (no pending changes apply to them).  The cells of
 *		bigint columns hold their values; count(column) needs only NULL or not.
 */
void
pfs_aggregates_add_piece(PfsAggregates *a, const PfsCellMap *map, const PfsCoreRowset *rows)
{
	int			i;

	for (i = 0; i < a->n; i++)
	{
		PfsAggregate *item = &a->items[i];
		const PfsCoreCell *cell = NULL;
		size_t		r;
		int			k;

		if (item->kind == PFS_AGG_COUNT_ROWS)
		{
			item->count += rows->nrows;
			continue;
		}
		for (k = 0; k < rows->ncells; k++)
		{
			if (map->cell_attr[k] == item->attnum - 1)
				cell = rows->cells + k;
		}
		if (cell == NULL)
			elog(ERROR, "perfschema_fdw: column %d of an aggregate was not read", item->attnum);
		for (r = 0; r < rows->nrows; r++, cell += rows->ncells)
		{
			if (cell->isnull)
				continue;
			if (item->kind == PFS_AGG_COUNT)
				item->count++;
			else
				add_value(item, cell->value);
		}
	}
}

/* One row, in a slot with the foreign table's attributes. */
void
pfs_aggregates_add_row(PfsAggregates *a, TupleTableSlot *slot)
{
	int			i;

	slot_getallattrs(slot);
	for (i = 0; i < a->n; i++)
	{
		PfsAggregate *item = &a->items[i];
		int			attr = item->attnum - 1;

		if (item->kind == PFS_AGG_COUNT_ROWS)
			item->count++;
		else if (slot->tts_isnull[attr])
			continue;
		else if (item->kind == PFS_AGG_COUNT)
			item->count++;
		else
			add_value(item, DatumGetInt64(slot->tts_values[attr]));
	}
}

/* A 128-bit sum as numeric (sum(bigint)'s type). */
static Datum
numeric_of(int128 v)
{
	char		digits[48];
	char	   *p = digits + sizeof(digits);
	bool		negative = v < 0;
	uint128		u = negative ? -(uint128) v : (uint128) v;

	if (v >= PG_INT64_MIN && v <= PG_INT64_MAX)
		return NumericGetDatum(int64_to_numeric((int64) v));
	*--p = '\0';
	do
	{
		*--p = (char) ('0' + (int) (u % 10));
		u /= 10;
	} while (u != 0);
	if (negative)
		*--p = '-';
	return DirectFunctionCall3(numeric_in, CStringGetDatum(p), ObjectIdGetDatum(InvalidOid),
							   Int32GetDatum(-1));
}

/* The results as the values of slot (the scan's tuple: one attribute per aggregate). */
void
pfs_aggregates_store(PfsAggregates *a, TupleTableSlot *slot)
{
	int			i;

	for (i = 0; i < a->n; i++)
	{
		PfsAggregate *item = &a->items[i];
		bool		counts = item->kind == PFS_AGG_COUNT_ROWS || item->kind == PFS_AGG_COUNT;

		/* sum, min and max of no values are NULL; counts are 0 */
		slot->tts_isnull[i] = !counts && item->count == 0;
		if (counts)
			slot->tts_values[i] = Int64GetDatum(item->count);
		else if (slot->tts_isnull[i])
			slot->tts_values[i] = (Datum) 0;
		else if (item->kind == PFS_AGG_SUM)
			slot->tts_values[i] = numeric_of(item->sum);
		else
			slot->tts_values[i] = Int64GetDatum(item->extreme);
	}
}
