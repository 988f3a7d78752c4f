/*-------------------------------------------------------------------------
 *
 * scan.c
 *	  Execution of perfschema_fdw scans (scan_plan.c plans them), and the
 *	  plumbing they share with ANALYZE: a server's regions, the core's next
 *	  piece.
 *
 * The rows come from the C++ core (pfs_core.h) in pieces of bounded size: a
 * piece's cells become Datums without copying (datum.c: text cells carry
 * room for a varlena header; only a database whose encoding is not UTF-8
 * gets copies).  The core's scan lives until the end of the scan, also on
 * error: a reset callback on the scan's memory context ends it.  ReScan
 * rewinds: a table that came in one piece is given again as it was (every
 * pass of a nested loop sees the same rows), a larger one is read again,
 * and new parameter values start a new scan.  The transaction's pending
 * setup changes apply to the rows through the overlay (overlay.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"

#include "compat.h"
#include "shim.h"

/* Bytes of rows a scan holds at a time (the core's pieces). */
#define PFS_PIECE_BYTES (1024 * 1024)

/* Executor state, in node->fdw_state; allocated in the query's context. */
typedef struct PfsScanState
{
	MemoryContextCallback end_scan; /* ends the core's scan when the query's
									 * context goes */
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
	PfsOverlay *overlay;		/* the transaction's pending changes (overlay.c) */
	Oid			relid;			/* the foreign table */
	PfsAggregates *aggregates;	/* the aggregates the scan computes, or NULL */
	bool		aggregated;		/* their row was returned */
	TupleTableSlot *row_slot;	/* rows of the table, to aggregate them one by one
								 * or to apply pending changes to them */
	int		   *scan_attnums;	/* compact tuples: each attribute's table
								 * attribute (0-based); NULL: the table's row type */
	bool		project_rows;	/* compact tuples made from row_slot's rows */
} PfsScanState;

static void
end_core_scan(void *arg)
{
	PfsScanState *state = arg;

	pfs_core_scan_end(state->scan);
	state->scan = NULL;
	state->rows = NULL;
}

/*
 * mark_wanted
 *		Mark the region columns the query reads, given core_attr (for each
 *		region column, its slot attribute or -1: pfs_map_columns).
 */
static void
mark_wanted(Relation rel, int ncolumns, const int *core_attr, List *wanted_attnums, bool *wanted)
{
	TupleDesc	tupdesc = RelationGetDescr(rel);
	bool	   *read = palloc0(sizeof(bool) * Max(tupdesc->natts, 1));
	ListCell   *lc;
	int			i;

	/* one pass over each list, not one over the columns for each attribute */
	foreach(lc, wanted_attnums)
	{
		int			attr = lfirst_int(lc) - 1;

		if (attr >= 0 && attr < tupdesc->natts && !TupleDescAttr(tupdesc, attr)->attisdropped)
			read[attr] = true;
	}
	for (i = 0; i < ncolumns; i++)
		wanted[i] = core_attr[i] >= 0 && core_attr[i] < tupdesc->natts && read[core_attr[i]];
	pfree(read);
}

/*
 * compact_core_attr
 *		core_attr (each region column's table attribute, or -1) as attributes
 *		of compact tuples whose attribute i is table attribute scan_attnums[i].
 */
static int *
compact_core_attr(const int *core_attr, int ncolumns, const int *scan_attnums, int natts,
				  int table_natts)
{
	int		   *compact = palloc(sizeof(int) * Max(ncolumns, 1));
	int		   *position = palloc(sizeof(int) * Max(table_natts, 1));
	int			c;
	int			i;

	for (i = 0; i < table_natts; i++)
		position[i] = -1;
	for (i = 0; i < natts; i++)
		if (scan_attnums[i] >= 0 && scan_attnums[i] < table_natts)
			position[scan_attnums[i]] = i;	/* the last, as before */
	for (c = 0; c < ncolumns; c++)
		compact[c] = core_attr[c] >= 0 && core_attr[c] < table_natts ? position[core_attr[c]] : -1;
	pfree(position);
	return compact;
}

/*
 * pfsBeginForeignScan
 *		Map the columns and prepare the operands of the pushed quals; the
 *		reader starts at the first row (parameters have their values then).
 */
void
pfsBeginForeignScan(ForeignScanState *node, int eflags)
{
	ForeignScan *plan = (ForeignScan *) node->ss.ps.plan;
	Relation	rel = node->ss.ss_currentRelation;
	Relation	opened = NULL;
	MemoryContext cxt;
	MemoryContext old;
	PfsScanState *state;
	int		   *core_attr = NULL;
	int			ncolumns;
	int			natts;

	/*
	 * The query's context, freed when the executor ends (a context of the scan's
	 * own was a tenth of a small scan's fixed cost); its reset callback ends the
	 * core's scan if the query fails first.
	 */
	cxt = node->ss.ps.state->es_query_cxt;
	state = MemoryContextAllocZero(cxt, sizeof(PfsScanState));
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
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		pfs_get_table_options(state->relid, &state->opts);	/* columns unchecked */
	else
	{
		/* the backend's copy (relation_cache.c), kept in the scan's context */
		const PfsRelationInfo *info = pfs_relation_info(rel);

		state->opts = info->opts;
		state->opts.region = pstrdup(info->opts.region);
		state->opts.table_name = pstrdup(info->opts.table_name);
		core_attr = palloc(sizeof(int) * Max(info->ncolumns, 1));
		memcpy(core_attr, info->core_attr, sizeof(int) * Max(info->ncolumns, 1));
	}
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
	mark_wanted(rel, ncolumns, core_attr, linitial(plan->fdw_private), state->wanted);
	state->overlay = pfs_overlay_begin(node, &state->opts, state->wanted, core_attr);
	state->scan_attnums = pfs_scan_attnums(plan, &natts);
	/* compact tuples: pending changes apply to whole rows, projected after */
	state->project_rows = state->scan_attnums != NULL && state->overlay != NULL;
	if (state->scan_attnums != NULL && !state->project_rows)
		pfs_cell_map(state->opts.table, state->wanted,
					 compact_core_attr(core_attr, ncolumns, state->scan_attnums, natts,
									   RelationGetDescr(rel)->natts),
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
 *		applied (overlay.c): rows it deleted are skipped, rows it inserted
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

TupleTableSlot *
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
void
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
bool
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
 *		End the core's scan (its memory goes with the query's context).
 */
void
pfsEndForeignScan(ForeignScanState *node)
{
	PfsScanState *state = node->fdw_state;

	if (state != NULL)
		end_core_scan(state);
	node->fdw_state = NULL;
}

/*
 * pfsExplainForeignScan
 *		Show the region file (or directory), the table, and the conditions the
 *		reader tests.
 */
void
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

/*
 * pfs_region_lookup
 *		The regions the server of a foreign table reads: its region file, or
 *		the region files of its directory; NULL and why when they cannot be
 *		read.  The core checks the files against the transaction's clock.
 */
PfsCoreRegion *
pfs_region_lookup(const PfsTableOptions *opts, PfsCoreError *err)
{
	pfs_give_transaction_clock();
	return opts->directory
		? pfs_core_region_directory_get(opts->serverid, opts->region, err)
		: pfs_core_region_get(opts->serverid, opts->region, err);
}

/*
 * pfs_region_of
 *		pfs_region_lookup, an error reported.
 */
PfsCoreRegion *
pfs_region_of(const PfsTableOptions *opts)
{
	PfsCoreError err;
	PfsCoreRegion *region = pfs_region_lookup(opts, &err);

	if (region == NULL)
		pfs_report_core_error(&err);
	return region;
}

/*
 * pfs_next_piece
 *		The core's next piece of rows of a scan (scans and ANALYZE).  The core
 *		polls the interrupt flag; when it stops for an interrupt that does not
 *		end the query, the piece is read again.
 */
const PfsCoreRowset *
pfs_next_piece(PfsCoreScan *scan)
{
	for (;;)
	{
		PfsCoreError err;
		const PfsCoreRowset *rows;

		CHECK_FOR_INTERRUPTS();
		rows = pfs_core_scan_next(scan, INTERRUPTS_CAN_BE_PROCESSED() ? &InterruptPending : NULL, &err);
		pfs_report_scan_warnings(scan);
		if (rows != NULL)
			return rows;
		if (err.kind != PFS_CORE_INTERRUPTED)
			pfs_report_core_error(&err);
	}
}
