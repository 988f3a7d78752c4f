/*-------------------------------------------------------------------------
 *
 * modify.h
 *	  Setup changes from SQL in perfschema_fdw (modify.c): the modify and
 *	  TRUNCATE callbacks, and the overlay that shows a transaction its own
 *	  pending changes in its scans.
 *
 *-------------------------------------------------------------------------
 */
#ifndef PERFSCHEMA_FDW_MODIFY_H
#define PERFSCHEMA_FDW_MODIFY_H

#include "foreign/fdwapi.h"

#include "shim.h"

/* Fills in the modify, TRUNCATE and updatability callbacks of the handler. */
extern void pfs_modify_register(FdwRoutine *routine);

/*
 * The overlay of a scan (NULL when the transaction changed nothing the scan
 * shows).  pfs_overlay_begin runs in BeginForeignScan, in the scan's memory
 * context (which frees it), after the columns are mapped and before the rows
 * are copied: it marks every mapped column wanted (the overlay needs the
 * key).  core_attr: the slot attribute of each region column, or -1.
 */
typedef struct PfsOverlay PfsOverlay;

extern PfsOverlay *pfs_overlay_begin(ForeignScanState *node, const PfsTableOptions *opts,
									 bool *wanted, const int *core_attr);
/* Applies the overlay to the row in slot; false when the row is gone. */
extern bool pfs_overlay_row(PfsOverlay *overlay, TupleTableSlot *slot);
/* After the last row: stores the next row the transaction inserted. */
extern bool pfs_overlay_extra_row(PfsOverlay *overlay, TupleTableSlot *slot);
extern void pfs_overlay_rewind(PfsOverlay *overlay);

#endif							/* PERFSCHEMA_FDW_MODIFY_H */
