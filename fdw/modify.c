/*-------------------------------------------------------------------------
 *
 * modify.c
 *	  UPDATE, INSERT, DELETE and TRUNCATE of perfschema_fdw foreign tables:
 *	  setup changes of an instrumented process, made by the transaction.
 *
 * What may change follows MySQL (the core's rules, pfs_core.h): UPDATE of
 * the setup columns of setup_instruments, setup_consumers, setup_timers,
 * threads, setup_actors and setup_objects; INSERT and DELETE of setup_actors
 * and setup_objects rows; TRUNCATE of the event tables, the summaries and
 * setup_actors/setup_objects.  Other tables are read-only
 * (IsForeignRelUpdatable), other columns refused at plan time.
 *
 * Row identity: the whole old row.  The planner adds a "wholerow" junk
 * column to every UPDATE of a foreign table (it needs the unchanged
 * columns); AddForeignUpdateTargets adds the same for DELETE.  The key of a
 * row (name; thread_id; host, user, role; object_type, object_schema,
 * object_name) is read from it.
 *
 * Transactions: nothing is written to the region while the transaction runs.
 * The core keeps a log of the changes, each with its subtransaction level
 * and command id.  At PRE_COMMIT the core applies the log under the setup
 * lock of each region (re-reading the current setup, writing only the
 * columns each change set); an error there aborts the transaction and
 * nothing is applied.  Abort discards the log; a subtransaction's abort
 * discards its part (RegisterSubXactCallback).  PREPARE TRANSACTION is
 * refused: a region cannot hold a prepared change.  Scans of the transaction
 * see the changes of its earlier commands through the overlay
 * (pfs_overlay_*), called by the scan callbacks of perfschema_fdw.c.
 *
 * Changes applied at PRE_COMMIT are seen by the instrumented process at
 * once: if the commit itself failed after that point (it cannot fail for a
 * reason of this extension), the region would keep them.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "storage/proc.h"
#include "optimizer/appendinfo.h"
#include "optimizer/inherit.h"
#include "optimizer/pathnode.h"
#include "parser/parsetree.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "compat.h"
#include "shim.h"

/* Executor state of an UPDATE, INSERT or DELETE, in rinfo->ri_FdwState. */
typedef struct PfsModifyState
{
	PfsTableOptions opts;
	int			ncolumns;		/* columns of the region table */
	int		   *core_attr;		/* slot attribute of each region column, or -1 */
	PfsCoreColumnType *types;	/* the type of each region column */
	bool	   *set;			/* UPDATE: is the column in the SET list; INSERT:
								 * in the column list (none for COPY) */
	AttrNumber	wholerow;		/* UPDATE, DELETE: junk column of the old row */
	bool		skip_duplicate; /* INSERT ... ON CONFLICT DO NOTHING */
	int			trace_column;	/* setup_actors: trace_enabled's region column, else -1 */
	PfsCoreValue *old_row;		/* ncolumns values */
	PfsCoreValue *new_row;
	MemoryContext temp_cxt;		/* reset for every row */
} PfsModifyState;

/* The overlay of a scan (modify.h). */
struct PfsOverlay
{
	PfsCoreOverlay *core;
	int			ncolumns;
	const int  *core_attr;
	PfsCoreColumnType *types;
	PfsCoreValue *row;
	MemoryContextCallback free_core;	/* frees core with the scan context */
};

static void pfsAddForeignUpdateTargets(PlannerInfo *root, Index rtindex,
									   RangeTblEntry *target_rte,
									   Relation target_relation);
static List *pfsPlanForeignModify(PlannerInfo *root, ModifyTable *plan,
								  Index resultRelation, int subplan_index);
static void pfsBeginForeignModify(ModifyTableState *mtstate, ResultRelInfo *rinfo,
								  List *fdw_private, int subplan_index, int eflags);
static TupleTableSlot *pfsExecForeignInsert(EState *estate, ResultRelInfo *rinfo,
											TupleTableSlot *slot,
											TupleTableSlot *planSlot);
static TupleTableSlot *pfsExecForeignUpdate(EState *estate, ResultRelInfo *rinfo,
											TupleTableSlot *slot,
											TupleTableSlot *planSlot);
static TupleTableSlot *pfsExecForeignDelete(EState *estate, ResultRelInfo *rinfo,
											TupleTableSlot *slot,
											TupleTableSlot *planSlot);
static void pfsEndForeignModify(EState *estate, ResultRelInfo *rinfo);
static void pfsBeginForeignInsert(ModifyTableState *mtstate, ResultRelInfo *rinfo);
static void pfsEndForeignInsert(EState *estate, ResultRelInfo *rinfo);
static int	pfsIsForeignRelUpdatable(Relation rel);
static void pfsExecForeignTruncate(List *rels, DropBehavior behavior, bool restart_seqs);

void
pfs_modify_register(FdwRoutine *routine)
{
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
}

/*
 * report_write_error
 *		Raise a write error of the core, with its SQLSTATE.
 */
static void
report_write_error(const PfsCoreWriteError *err)
{
	const char *s = err->sqlstate;

	if (s[0] == '\0')
		pfs_report_core_error(&err->error);
	ereport(ERROR,
			(errcode(MAKE_SQLSTATE(s[0], s[1], s[2], s[3], s[4])),
			 errmsg_internal("%s", err->error.message),
			 err->error.detail[0] ? errdetail_internal("%s", err->error.detail) : 0,
			 err->error.hint[0] ? errhint("%s", err->error.hint) : 0));
}

/* ---- Transactions ---- */

/*
 * commit_changes
 *		Apply the pending changes at PRE_COMMIT.
 *
 * The wait for a region's setup lock ends at a cancel (pg_cancel_backend) and
 * after lock_timeout or statement_timeout, whichever is shorter.  PostgreSQL
 * turns statement_timeout off before it commits, so the bound is applied here,
 * counted from the start of the wait.
 */
static void
commit_changes(void)
{
	PfsCoreWriteError err;
	int			timeout_ms = 0;
	bool		by_statement_timeout = false;

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
	while (pfs_core_write_pending() &&
		   !pfs_core_write_commit(INTERRUPTS_CAN_BE_PROCESSED() ? &InterruptPending : NULL,
								  (uint32) timeout_ms, &err))
	{
		if (err.error.kind == PFS_CORE_LOCK_TIMEOUT)
			ereport(ERROR,
					(errcode(by_statement_timeout ? ERRCODE_QUERY_CANCELED : ERRCODE_LOCK_NOT_AVAILABLE),
					 errmsg(by_statement_timeout ? "canceling statement due to statement timeout"
							: "canceling statement due to lock timeout"),
					 errdetail_internal("%s", err.error.detail)));
		if (err.error.kind != PFS_CORE_INTERRUPTED)
			report_write_error(&err);
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
			break;
	}
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

static void
register_callbacks(void)
{
	static bool registered = false;

	if (registered)
		return;
	RegisterXactCallback(pfs_xact_callback, NULL);
	RegisterSubXactCallback(pfs_subxact_callback, NULL);
	registered = true;
}

/* ---- Values ---- */

static bool
convert_text(void)
{
	return GetDatabaseEncoding() != PG_UTF8 && GetDatabaseEncoding() != PG_SQL_ASCII;
}

/*
 * A Datum as a core value (UTF-8 text, or int64).  A numeric column (a sum of
 * times: the core only zeroes them) gives its value when it fits in int32,
 * else INT64_MAX (not zero).
 */
static void
datum_to_value(Datum datum, bool isnull, PfsCoreColumnType type, PfsCoreValue *v)
{
	memset(v, 0, sizeof(*v));
	v->isnull = isnull;
	if (isnull)
		return;
	if (type == PFS_CORE_NUMERIC)
	{
		bool		error = false;
		int32		small = numeric_int4_opt_error(DatumGetNumeric(datum), &error);

		v->value = error ? PG_INT64_MAX : small;
	}
	else if (type == PFS_CORE_TEXT)
	{
		text	   *t = DatumGetTextPP(datum);
		char	   *s = VARDATA_ANY(t);
		int			len = VARSIZE_ANY_EXHDR(t);

		if (convert_text())
		{
			char	   *converted = pg_server_to_any(s, len, PG_UTF8);

			if (converted != s)
			{
				s = converted;
				len = strlen(converted);
			}
		}
		v->text = s;
		v->len = len;
	}
	else
		v->value = DatumGetInt64(datum);
}

/* A core value as a Datum (text converted to the database encoding). */
static Datum
value_to_datum(const PfsCoreValue *v, PfsCoreColumnType type)
{
	if (type == PFS_CORE_NUMERIC)
		return NumericGetDatum(int64_to_numeric(v->value));
	if (type != PFS_CORE_TEXT)
		return Int64GetDatum(v->value);
	if (convert_text())
	{
		char	   *converted = pg_any_to_server(v->text, (int) v->len, PG_UTF8);

		if (converted != v->text)
			return CStringGetTextDatum(converted);
	}
	return PointerGetDatum(cstring_to_text_with_len(v->text, (int) v->len));
}

/*
 * map_attributes
 *		The slot attribute of each region column, by name; the foreign
 *		table's columns must all be columns of the region table, with its
 *		types.
 */
static void
map_attributes(Relation rel, const PfsTableOptions *opts, int *core_attr, PfsCoreColumnType *types)
{
	int			ncolumns = pfs_core_column_count(opts->table);
	int			i;

	for (i = 0; i < ncolumns; i++)
		types[i] = pfs_core_column_type(opts->table, i);
	pfs_map_columns(rel, opts, core_attr);
}

/* The values of a slot as a row of core values. */
static void
slot_to_row(const PfsModifyState *state, TupleTableSlot *slot, PfsCoreValue *row)
{
	int			c;

	slot_getallattrs(slot);
	for (c = 0; c < state->ncolumns; c++)
	{
		int			attr = state->core_attr[c];

		if (attr < 0)
			datum_to_value((Datum) 0, true, state->types[c], &row[c]);
		else
			datum_to_value(slot->tts_values[attr], slot->tts_isnull[attr],
						   state->types[c], &row[c]);
	}
}

/* The old row of an UPDATE or DELETE, from the wholerow junk column. */
static HeapTuple
old_tuple(const PfsModifyState *state, TupleTableSlot *planSlot, HeapTuple tuple)
{
	bool		isnull;
	Datum		datum = ExecGetJunkAttribute(planSlot, state->wholerow, &isnull);
	HeapTupleHeader header;

	if (isnull)
		elog(ERROR, "wholerow is NULL");
	header = DatumGetHeapTupleHeader(datum);
	tuple->t_len = HeapTupleHeaderGetDatumLength(header);
	ItemPointerSetInvalid(&tuple->t_self);
	tuple->t_tableOid = InvalidOid;
	tuple->t_data = header;
	return tuple;
}

static void
tuple_to_row(const PfsModifyState *state, HeapTuple tuple, TupleDesc tupdesc,
			 PfsCoreValue *row)
{
	Datum	   *values = palloc(sizeof(Datum) * tupdesc->natts);
	bool	   *nulls = palloc(sizeof(bool) * tupdesc->natts);
	int			c;

	heap_deform_tuple(tuple, tupdesc, values, nulls);
	for (c = 0; c < state->ncolumns; c++)
	{
		int			attr = state->core_attr[c];

		if (attr < 0)
			datum_to_value((Datum) 0, true, state->types[c], &row[c]);
		else
			datum_to_value(values[attr], nulls[attr], state->types[c], &row[c]);
	}
}

/*
 * The slot's values with the columns the core normalized replaced, as Datums
 * (in the current memory context); false when nothing changed.
 */
static bool
normalized_values(const PfsModifyState *state, TupleTableSlot *slot,
				  const PfsCoreValue *row, Datum **values, bool **nulls)
{
	int			natts = slot->tts_tupleDescriptor->natts;
	bool		changed = false;
	int			c;

	for (c = 0; c < state->ncolumns; c++)
		changed |= row[c].changed && state->core_attr[c] >= 0;
	if (!changed)
		return false;
	slot_getallattrs(slot);
	*values = palloc(sizeof(Datum) * natts);
	*nulls = palloc(sizeof(bool) * natts);
	memcpy(*values, slot->tts_values, sizeof(Datum) * natts);
	memcpy(*nulls, slot->tts_isnull, sizeof(bool) * natts);
	for (c = 0; c < state->ncolumns; c++)
	{
		int			attr = state->core_attr[c];

		if (attr < 0 || !row[c].changed)
			continue;
		(*nulls)[attr] = row[c].isnull;
		(*values)[attr] = row[c].isnull ? (Datum) 0 : value_to_datum(&row[c], state->types[c]);
	}
	return true;
}

/* ---- Planning ---- */

static int
table_of(Relation rel, PfsTableOptions *opts)
{
	pfs_get_table_options(RelationGetRelid(rel), opts);
	return opts->table;
}

/*
 * pfsIsForeignRelUpdatable
 *		What MySQL allows on the table; the rest gets PostgreSQL's own errors.
 */
static int
pfsIsForeignRelUpdatable(Relation rel)
{
	PfsTableOptions opts;
	int			ops = pfs_core_table_operations(table_of(rel, &opts));
	int			result = 0;

	if (ops & PFS_CORE_OP_UPDATE)
		result |= 1 << CMD_UPDATE;
	if (ops & PFS_CORE_OP_INSERT)
		result |= 1 << CMD_INSERT;
	if (ops & PFS_CORE_OP_DELETE)
		result |= 1 << CMD_DELETE;
	return result;
}

/*
 * pfsAddForeignUpdateTargets
 *		Rows are identified by their whole old row: the planner adds it to
 *		every UPDATE; add it to DELETE.
 */
static void
pfsAddForeignUpdateTargets(PlannerInfo *root, Index rtindex,
						   RangeTblEntry *target_rte, Relation target_relation)
{
	TriggerDesc *triggers = target_relation->trigdesc;

	if (root->parse->commandType != CMD_DELETE)
		return;
	/* (with DELETE row triggers the planner adds it too) */
	if (triggers && (triggers->trig_delete_after_row || triggers->trig_delete_before_row))
		return;
	add_row_identity_var(root, makeWholeRowVar(target_rte, rtindex, 0, false),
						 rtindex, "wholerow");
}

/* "a", "b" and "c": the columns of a table UPDATE may set, for a hint. */
static char *
updatable_columns(int table)
{
	StringInfoData buf;
	int			ncolumns = pfs_core_column_count(table);
	int			total = 0;
	int			done = 0;
	int			c;

	for (c = 0; c < ncolumns; c++)
		total += pfs_core_column_updatable(table, c);
	initStringInfo(&buf);
	for (c = 0; c < ncolumns; c++)
	{
		if (!pfs_core_column_updatable(table, c))
			continue;
		if (done > 0)
			appendStringInfoString(&buf, done == total - 1 ? " and " : ", ");
		appendStringInfo(&buf, "\"%s\"", pfs_core_column_name(table, c));
		done++;
	}
	return buf.data;
}

/*
 * pfsPlanForeignModify
 *		UPDATE: refuse the columns MySQL does not let change; pass on the
 *		columns set.  INSERT: pass on the columns it names (a NULL there is an
 *		error, a column left out takes MySQL's default); note ON CONFLICT DO
 *		NOTHING.
 */
static List *
pfsPlanForeignModify(PlannerInfo *root, ModifyTable *plan, Index resultRelation,
					 int subplan_index)
{
	RangeTblEntry *rte = planner_rt_fetch(resultRelation, root);
	List	   *updated = NIL;
	bool		skip_duplicate = false;

	if (plan->operation == CMD_UPDATE)
	{
		Relation	rel = table_open(rte->relid, NoLock);
		PfsTableOptions opts;
		Bitmapset  *cols = get_rel_all_updated_cols(root, find_base_rel(root, resultRelation));
		int			k = -1;

		/* (a table without updatable columns gets PostgreSQL's error) */
		if (!(pfs_core_table_operations(table_of(rel, &opts)) & PFS_CORE_OP_UPDATE))
			cols = NULL;
		while ((k = bms_next_member(cols, k)) >= 0)
		{
			AttrNumber	attno = k + FirstLowInvalidHeapAttributeNumber;
			const char *name;
			int			column;

			if (attno <= InvalidAttrNumber)
				continue;
			name = NameStr(TupleDescAttr(RelationGetDescr(rel), attno - 1)->attname);
			column = pfs_core_column_find(opts.table, name);
			if (column < 0 || !pfs_core_column_updatable(opts.table, column))
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot update column \"%s\" of foreign table \"%s\"",
								name, RelationGetRelationName(rel)),
						 errdetail("Only %s of performance_schema table \"%s\" can be updated.",
								   updatable_columns(opts.table), opts.table_name)));
			updated = lappend_int(updated, attno);
		}
		table_close(rel, NoLock);
	}
	if (plan->operation == CMD_INSERT)
	{
		Bitmapset  *cols = pfs_inserted_cols(root, rte);
		int			k = -1;

		while ((k = bms_next_member(cols, k)) >= 0)
		{
			AttrNumber	attno = k + FirstLowInvalidHeapAttributeNumber;

			if (attno > InvalidAttrNumber)
				updated = lappend_int(updated, attno);
		}
	}
	if (plan->operation == CMD_INSERT && plan->onConflictAction == ONCONFLICT_NOTHING)
		skip_duplicate = true;
	else if (plan->onConflictAction != ONCONFLICT_NONE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("ON CONFLICT DO UPDATE is not supported on perfschema_fdw foreign tables")));
	return list_make2(updated, makeInteger(skip_duplicate));
}

/* ---- Execution ---- */

static PfsModifyState *
begin_state(EState *estate, Relation rel)
{
	PfsModifyState *state = palloc0(sizeof(PfsModifyState));

	table_of(rel, &state->opts);
	state->ncolumns = pfs_core_column_count(state->opts.table);
	state->trace_column =
		strcmp(pfs_core_table_name(state->opts.table), "setup_actors") == 0
		? pfs_core_column_find(state->opts.table, "trace_enabled") : -1;
	state->core_attr = palloc(sizeof(int) * state->ncolumns);
	state->types = palloc(sizeof(PfsCoreColumnType) * state->ncolumns);
	state->set = palloc0(sizeof(bool) * state->ncolumns);
	state->old_row = palloc0(sizeof(PfsCoreValue) * state->ncolumns);
	state->new_row = palloc0(sizeof(PfsCoreValue) * state->ncolumns);
	state->temp_cxt = AllocSetContextCreate(estate->es_query_cxt,
											"perfschema_fdw modify",
											ALLOCSET_SMALL_SIZES);
	map_attributes(rel, &state->opts, state->core_attr, state->types);
	return state;
}

/* The region must be writable now, not only at commit. */
static void
check_writable(const PfsModifyState *state)
{
	PfsCoreWriteError err;

	if (!pfs_core_write_check(state->opts.region, &err))
		report_write_error(&err);
	register_callbacks();
}

/*
 * pfsBeginForeignModify
 *		Map the columns, find the old row, check that the region can be
 *		written.
 */
static void
pfsBeginForeignModify(ModifyTableState *mtstate, ResultRelInfo *rinfo,
					  List *fdw_private, int subplan_index, int eflags)
{
	Relation	rel = rinfo->ri_RelationDesc;
	PfsModifyState *state;
	CmdType		operation = mtstate->operation;
	ListCell   *lc;
	int			c;

	state = begin_state(mtstate->ps.state, rel);
	rinfo->ri_FdwState = state;
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;

	foreach(lc, (List *) linitial(fdw_private))
	{
		const char *name = NameStr(TupleDescAttr(RelationGetDescr(rel), lfirst_int(lc) - 1)->attname);

		c = pfs_core_column_find(state->opts.table, name);
		if (c >= 0)
			state->set[c] = true;
	}
	state->skip_duplicate = intVal(lsecond(fdw_private)) != 0;

	if (operation == CMD_UPDATE || operation == CMD_DELETE)
	{
		state->wholerow = ExecFindJunkAttributeInTlist(outerPlanState(mtstate)->plan->targetlist,
													   "wholerow");
		if (!AttributeNumberIsValid(state->wholerow))
			elog(ERROR, "could not find junk wholerow column");
		for (c = 0; c < state->ncolumns; c++)
		{
			if (pfs_core_column_is_key(state->opts.table, c) && state->core_attr[c] < 0)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_COLUMN_NAME),
						 errmsg("foreign table \"%s\" lacks key column \"%s\"",
								RelationGetRelationName(rel),
								pfs_core_column_name(state->opts.table, c)),
						 errdetail("Rows of performance_schema table \"%s\" are updated and deleted by their key.",
								   state->opts.table_name),
						 errhint("Use IMPORT FOREIGN SCHEMA performance_schema to create the foreign tables.")));
		}
		/* a directory's rows are told apart by the process that wrote them */
		c = state->ncolumns - pfs_core_extra_column_count(state->opts.table);
		if (state->opts.directory && state->core_attr[c] < 0)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_COLUMN_NAME),
					 errmsg("foreign table \"%s\" lacks column \"process_id\"",
							RelationGetRelationName(rel)),
					 errdetail("Its server reads a directory of regions; process_id tells which region a row belongs to."),
					 errhint("Use IMPORT FOREIGN SCHEMA performance_schema to create the foreign tables.")));
	}
	check_writable(state);
}

/*
 * pfsBeginForeignInsert
 *		COPY FROM, and INSERT routed to a partition.
 */
static void
pfsBeginForeignInsert(ModifyTableState *mtstate, ResultRelInfo *rinfo)
{
	PfsModifyState *state = begin_state(mtstate->ps.state, rinfo->ri_RelationDesc);

	rinfo->ri_FdwState = state;
	check_writable(state);
}

static void
pfsEndForeignInsert(EState *estate, ResultRelInfo *rinfo)
{
}

static void
pfsEndForeignModify(EState *estate, ResultRelInfo *rinfo)
{
}

/*
 * store_values
 *		Replace the slot's contents (normalized values: 'yes' is stored and
 *		returned as 'YES').
 */
static void
store_values(TupleTableSlot *slot, Datum *values, bool *nulls)
{
	HeapTuple	tuple = heap_form_tuple(slot->tts_tupleDescriptor, values, nulls);

	ExecForceStoreHeapTuple(tuple, slot, true);
}

/* The row changes ExecForeignInsert/Update/Delete record. */
typedef enum PfsRowChange
{
	PFS_ROW_INSERT,
	PFS_ROW_UPDATE,
	PFS_ROW_DELETE
} PfsRowChange;

/*
 * check_trace_privilege
 *		Setting TRACE_ENABLED of a setup_actors row to YES makes the instrumented
 *		program write trace files on this host, so it takes what writing server
 *		files takes (WL#4878: MySQL's FILE privilege), not only UPDATE on the
 *		table.  Called after the core normalized the row ('yes' is 'YES' then);
 *		the error aborts the transaction, which discards the recorded change.
 */
static void
check_trace_privilege(const PfsModifyState *state, bool insert)
{
	int			c = state->trace_column;
	const PfsCoreValue *v;

	if (c < 0 || (!insert && !state->set[c]))
		return;
	v = &state->new_row[c];
	if (v->isnull || v->len != 3 || memcmp(v->text, "YES", 3) != 0)
		return;
	if (!has_privs_of_role(GetUserId(), ROLE_PG_WRITE_SERVER_FILES))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to set trace_enabled of setup_actors"),
				 errdetail("Traced threads write trace files on the server; only superusers and roles with privileges of the \"pg_write_server_files\" role may turn tracing on."),
				 errhint("Ask a superuser to grant you pg_write_server_files, or leave trace_enabled at 'NO'.")));
}

/*
 * execute_row_change
 *		Record one row change with the core (the three ExecForeign* callbacks).
 *
 * UPDATE and DELETE find the row by the key of the old row (the wholerow junk
 * column); INSERT and UPDATE store the normalized values back in the slot
 * ('yes' becomes 'YES'); DELETE returns the old row (RETURNING).  NULL when an
 * INSERT ... ON CONFLICT DO NOTHING skipped the row.
 */
static TupleTableSlot *
execute_row_change(EState *estate, ResultRelInfo *rinfo, PfsRowChange change,
				   TupleTableSlot *slot, TupleTableSlot *planSlot)
{
	PfsModifyState *state = rinfo->ri_FdwState;
	const char *region = state->opts.region;
	int			table = state->opts.table;
	int			level = GetCurrentTransactionNestLevel();
	CommandId	cid = estate->es_output_cid;
	PfsCoreWriteError err;
	MemoryContext old;
	HeapTupleData tuple;
	bool		skipped = false;
	bool		ok = false;
	bool		changed = false;
	Datum	   *values = NULL;
	bool	   *nulls = NULL;

	MemoryContextReset(state->temp_cxt);
	old = MemoryContextSwitchTo(state->temp_cxt);
	if (change != PFS_ROW_INSERT)
		tuple_to_row(state, old_tuple(state, planSlot, &tuple),
					 RelationGetDescr(rinfo->ri_RelationDesc), state->old_row);
	if (change != PFS_ROW_DELETE)
		slot_to_row(state, slot, state->new_row);
	switch (change)
	{
		case PFS_ROW_INSERT:
			ok = pfs_core_write_insert(region, table, state->new_row, state->set, state->skip_duplicate,
									   &skipped, level, cid, &err);
			break;
		case PFS_ROW_UPDATE:
			ok = pfs_core_write_update(region, table, state->old_row, state->new_row, state->set,
									   level, cid, &err);
			break;
		case PFS_ROW_DELETE:
			ok = pfs_core_write_delete(region, table, state->old_row, level, cid, &err);
			break;
	}
	if (ok && !skipped && change != PFS_ROW_DELETE)
		changed = normalized_values(state, slot, state->new_row, &values, &nulls);
	MemoryContextSwitchTo(old);
	if (!ok)
		report_write_error(&err);
	if (!skipped && change != PFS_ROW_DELETE)
		check_trace_privilege(state, change == PFS_ROW_INSERT);
	if (skipped)
		return NULL;
	if (change == PFS_ROW_DELETE)
		ExecForceStoreHeapTuple(heap_copytuple(&tuple), slot, true);
	else if (changed)
		store_values(slot, values, nulls);
	return slot;
}

/*
 * pfsExecForeignInsert
 *		Record the insertion of a setup_actors or setup_objects row (columns
 *		the INSERT leaves out take MySQL's defaults; a NULL it names is an
 *		error).
 */
static TupleTableSlot *
pfsExecForeignInsert(EState *estate, ResultRelInfo *rinfo, TupleTableSlot *slot,
					 TupleTableSlot *planSlot)
{
	return execute_row_change(estate, rinfo, PFS_ROW_INSERT, slot, planSlot);
}

/*
 * pfsExecForeignUpdate
 *		Record the change of the row the old row's key names.
 */
static TupleTableSlot *
pfsExecForeignUpdate(EState *estate, ResultRelInfo *rinfo, TupleTableSlot *slot,
					 TupleTableSlot *planSlot)
{
	return execute_row_change(estate, rinfo, PFS_ROW_UPDATE, slot, planSlot);
}

/*
 * pfsExecForeignDelete
 *		Record the deletion of the row the old row's key names.
 */
static TupleTableSlot *
pfsExecForeignDelete(EState *estate, ResultRelInfo *rinfo, TupleTableSlot *slot,
					 TupleTableSlot *planSlot)
{
	return execute_row_change(estate, rinfo, PFS_ROW_DELETE, slot, planSlot);
}

/*
 * pfsExecForeignTruncate
 *		Record the TRUNCATE of every table (the event tables are emptied, the
 *		summaries reset, setup_actors and setup_objects emptied at commit);
 *		tables MySQL does not truncate refuse it, and then none is truncated.
 */
static void
pfsExecForeignTruncate(List *rels, DropBehavior behavior, bool restart_seqs)
{
	PfsTableOptions *opts = palloc(sizeof(PfsTableOptions) * Max(list_length(rels), 1));
	ListCell   *lc;
	int			i = 0;

	foreach(lc, rels)
	{
		Relation	rel = lfirst(lc);
		int			ops = pfs_core_table_operations(table_of(rel, &opts[i]));

		if (!(ops & PFS_CORE_OP_TRUNCATE))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("foreign table \"%s\" does not allow truncates",
							RelationGetRelationName(rel)),
					 errdetail("MySQL refuses TRUNCATE of performance_schema table \"%s\" as well.",
							   opts[i].table_name),
					 (ops & PFS_CORE_OP_UPDATE)
					 ? errhint("Use UPDATE to change the setup it shows.") : 0));
		i++;
	}
	i = 0;
	foreach(lc, rels)
	{
		PfsCoreWriteError err;

		if (!pfs_core_write_truncate(opts[i].region, opts[i].table,
									 GetCurrentTransactionNestLevel(),
									 GetCurrentCommandId(true), &err))
			report_write_error(&err);
		i++;
	}
	register_callbacks();
}

/* ---- The overlay of scans ---- */

static void
free_overlay(void *arg)
{
	PfsOverlay *overlay = arg;

	pfs_core_overlay_free(overlay->core);
	overlay->core = NULL;
}

PfsOverlay *
pfs_overlay_begin(ForeignScanState *node, const PfsTableOptions *opts, bool *wanted,
				  const int *core_attr)
{
	EState	   *estate = node->ss.ps.state;
	CommandId	cid;
	PfsCoreWriteError err;
	PfsOverlay *overlay;
	int			c;

	if (!pfs_core_write_pending())
		return NULL;
	/* The changes of the commands before this one (not this one's own). */
	cid = estate->es_snapshot != NULL ? estate->es_snapshot->curcid : GetCurrentCommandId(false);
	overlay = palloc0(sizeof(PfsOverlay));
	overlay->core = pfs_core_overlay_begin(opts->region, opts->table, cid, &err);
	if (overlay->core == NULL)
	{
		if (err.error.kind != PFS_CORE_OK || err.sqlstate[0] != '\0')
			report_write_error(&err);
		pfree(overlay);
		return NULL;
	}
	overlay->free_core.func = free_overlay;
	overlay->free_core.arg = overlay;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &overlay->free_core);

	overlay->ncolumns = pfs_core_column_count(opts->table);
	overlay->core_attr = core_attr;
	overlay->types = palloc(sizeof(PfsCoreColumnType) * overlay->ncolumns);
	overlay->row = palloc0(sizeof(PfsCoreValue) * overlay->ncolumns);
	for (c = 0; c < overlay->ncolumns; c++)
	{
		overlay->types[c] = pfs_core_column_type(opts->table, c);
		if (core_attr[c] >= 0)
			wanted[c] = true;
	}
	return overlay;
}

/* Stores the values the core changed into the slot's arrays. */
static void
put_changed(PfsOverlay *overlay, TupleTableSlot *slot, bool all)
{
	int			c;

	for (c = 0; c < overlay->ncolumns; c++)
	{
		int			attr = overlay->core_attr[c];
		const PfsCoreValue *v = &overlay->row[c];

		if (attr < 0 || !(all || v->changed))
			continue;
		slot->tts_isnull[attr] = v->isnull;
		slot->tts_values[attr] = v->isnull ? (Datum) 0 : value_to_datum(v, overlay->types[c]);
	}
}

bool
pfs_overlay_row(PfsOverlay *overlay, TupleTableSlot *slot)
{
	int			c;
	int			result;

	for (c = 0; c < overlay->ncolumns; c++)
	{
		int			attr = overlay->core_attr[c];

		if (attr < 0)
			datum_to_value((Datum) 0, true, overlay->types[c], &overlay->row[c]);
		else
			datum_to_value(slot->tts_values[attr], slot->tts_isnull[attr],
						   overlay->types[c], &overlay->row[c]);
	}
	result = pfs_core_overlay_row(overlay->core, overlay->row);
	if (result == -2)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory")));
	if (result < 0)
		return false;
	if (result > 0)
		put_changed(overlay, slot, false);
	return true;
}

bool
pfs_overlay_extra_row(PfsOverlay *overlay, TupleTableSlot *slot)
{
	if (!pfs_core_overlay_extra(overlay->core, overlay->row))
		return false;
	ExecClearTuple(slot);
	memset(slot->tts_isnull, true, sizeof(bool) * slot->tts_tupleDescriptor->natts);
	put_changed(overlay, slot, true);
	ExecStoreVirtualTuple(slot);
	return true;
}

void
pfs_overlay_rewind(PfsOverlay *overlay)
{
	if (overlay != NULL)
		pfs_core_overlay_rewind(overlay->core);
}
