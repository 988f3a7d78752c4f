/*-------------------------------------------------------------------------
 *
 * overlay.c
 *	  The overlay of a scan: shows a transaction its own pending setup
 *	  changes (the core's log, which modify.c fills and xact.c applies at
 *	  commit) in the rows its later commands read.  The scan callbacks call
 *	  it: rows the transaction deleted are skipped, rows it updated show the
 *	  new values, rows it inserted come after the region's rows.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "executor/executor.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "shim.h"

/* The overlay of a scan (shim.h). */
struct PfsOverlay
{
	PfsCoreOverlay *core;
	int			ncolumns;
	const int  *core_attr;
	PfsCoreColumnType *types;
	PfsCoreValue *row;
	MemoryContextCallback free_core;	/* frees core with the scan context */
};

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
			pfs_report_write_error(&err);
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

/* Stores the values the core changed (or all) into the slot's arrays. */
static void
put_changed(PfsOverlay *overlay, TupleTableSlot *slot, bool all)
{
	pfs_row_to_datums(overlay->ncolumns, overlay->core_attr, overlay->types, overlay->row, !all,
					  slot->tts_values, slot->tts_isnull);
}

bool
pfs_overlay_row(PfsOverlay *overlay, TupleTableSlot *slot)
{
	int			result;

	pfs_datums_to_row(overlay->ncolumns, overlay->core_attr, overlay->types, slot->tts_values,
					  slot->tts_isnull, overlay->row);
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
