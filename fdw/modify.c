/*-------------------------------------------------------------------------
 *
 * modify.c
 *	  Execution of UPDATE, INSERT, DELETE and TRUNCATE of perfschema_fdw
 *	  foreign tables (modify_plan.c plans them): setup changes of an
 *	  instrumented process, made by the transaction.
 *
 * Nothing is written to the region while the transaction runs: each row
 * change is recorded in the core's log, with its subtransaction level and
 * command id, and its values as the core normalized them ('yes' is 'YES').
 * xact.c applies the log when the transaction commits; the scans of the
 * transaction's later commands see it through the overlay (overlay.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/pg_authid.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/memutils.h"
#include "utils/rel.h"

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
	slot_getallattrs(slot);
	pfs_datums_to_row(state->ncolumns, state->core_attr, state->types, slot->tts_values,
					  slot->tts_isnull, row);
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

	heap_deform_tuple(tuple, tupdesc, values, nulls);
	pfs_datums_to_row(state->ncolumns, state->core_attr, state->types, values, nulls, row);
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
	pfs_row_to_datums(state->ncolumns, state->core_attr, state->types, row, true, *values, *nulls);
	return true;
}

static PfsModifyState *
begin_state(EState *estate, Relation rel)
{
	PfsModifyState *state = palloc0(sizeof(PfsModifyState));

	pfs_get_relation_options(rel, &state->opts);
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
		pfs_report_write_error(&err);
}

/*
 * pfsBeginForeignModify
 *		Map the columns, find the old row, check that the region can be
 *		written.
 */
void
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
void
pfsBeginForeignInsert(ModifyTableState *mtstate, ResultRelInfo *rinfo)
{
	PfsModifyState *state = begin_state(mtstate->ps.state, rinfo->ri_RelationDesc);

	rinfo->ri_FdwState = state;
	check_writable(state);
}

void
pfsEndForeignInsert(EState *estate, ResultRelInfo *rinfo)
{
}

void
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
		pfs_report_write_error(&err);
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
TupleTableSlot *
pfsExecForeignInsert(EState *estate, ResultRelInfo *rinfo, TupleTableSlot *slot,
					 TupleTableSlot *planSlot)
{
	return execute_row_change(estate, rinfo, PFS_ROW_INSERT, slot, planSlot);
}

/*
 * pfsExecForeignUpdate
 *		Record the change of the row the old row's key names.
 */
TupleTableSlot *
pfsExecForeignUpdate(EState *estate, ResultRelInfo *rinfo, TupleTableSlot *slot,
					 TupleTableSlot *planSlot)
{
	return execute_row_change(estate, rinfo, PFS_ROW_UPDATE, slot, planSlot);
}

/*
 * pfsExecForeignDelete
 *		Record the deletion of the row the old row's key names.
 */
TupleTableSlot *
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
void
pfsExecForeignTruncate(List *rels, DropBehavior behavior, bool restart_seqs)
{
	PfsTableOptions *opts = palloc(sizeof(PfsTableOptions) * Max(list_length(rels), 1));
	ListCell   *lc;
	int			i = 0;

	foreach(lc, rels)
	{
		Relation	rel = lfirst(lc);
		int			ops = pfs_core_table_operations(pfs_get_relation_options(rel, &opts[i]));

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
			pfs_report_write_error(&err);
		i++;
	}
}
