/*-------------------------------------------------------------------------
 *
 * modify_plan.c
 *	  Planning of UPDATE, INSERT and DELETE on perfschema_fdw foreign tables:
 *	  which tables may change, the row identity, and the columns a statement
 *	  sets (modify.c executes them).
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
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "lib/stringinfo.h"
#include "nodes/makefuncs.h"
#include "optimizer/appendinfo.h"
#include "optimizer/inherit.h"
#include "optimizer/pathnode.h"
#include "parser/parsetree.h"
#include "utils/rel.h"

#include "compat.h"
#include "shim.h"

/*
 * pfsIsForeignRelUpdatable
 *		What MySQL allows on the table; the rest gets PostgreSQL's own errors.
 */
int
pfsIsForeignRelUpdatable(Relation rel)
{
	PfsTableOptions opts;
	int			ops = pfs_core_table_operations(pfs_get_relation_options(rel, &opts));
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
void
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
List *
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
		if (!(pfs_core_table_operations(pfs_get_relation_options(rel, &opts)) & PFS_CORE_OP_UPDATE))
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
