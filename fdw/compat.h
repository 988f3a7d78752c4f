/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  PostgreSQL version differences the perfschema_fdw shim depends on.
 *
 * Supported: PostgreSQL 15, 17 and 18 (built and tested on each: docs/postgresql.md).
 * Every #if on PG_VERSION_NUM lives here, each with the version that brought
 * the difference.
 *
 *-------------------------------------------------------------------------
 */
#ifndef PERFSCHEMA_FDW_COMPAT_H
#define PERFSCHEMA_FDW_COMPAT_H

#include "optimizer/pathnode.h"

/*
 * The columns an INSERT names (a Bitmapset offset by
 * FirstLowInvalidHeapAttributeNumber): PG16 moved them from the RangeTblEntry
 * to its RTEPermissionInfo.
 */
#if PG_VERSION_NUM >= 160000
#include "parser/parse_relation.h"
#define pfs_inserted_cols(root, rte) \
	(getRTEPermissionInfo((root)->parse->rteperminfos, (rte))->insertedCols)
#else
#define pfs_inserted_cols(root, rte) ((rte)->insertedCols)
#endif

/* PG16 moved the varlena macros (SET_VARSIZE) out of postgres.h. */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

/* PG18 split ExplainState and the ExplainProperty functions out of explain.h. */
#if PG_VERSION_NUM >= 180000
#include "commands/explain_format.h"
#include "commands/explain_state.h"
#else
#include "commands/explain.h"
#endif

/*
 * create_foreignscan_path: PG17 added fdw_restrictinfo, PG18 disabled_nodes.
 * Our paths have no pathkeys and no outer plan; required_outer is NULL for an
 * unparameterized path.
 */
#if PG_VERSION_NUM >= 180000
#define pfs_create_foreignscan_path(root, rel, rows, startup, total, required_outer, fdw_private) \
	create_foreignscan_path((root), (rel), NULL, (rows), 0, (startup), (total), \
							NIL, (required_outer), NULL, NIL, (fdw_private))
#elif PG_VERSION_NUM >= 170000
#define pfs_create_foreignscan_path(root, rel, rows, startup, total, required_outer, fdw_private) \
	create_foreignscan_path((root), (rel), NULL, (rows), (startup), (total), \
							NIL, (required_outer), NULL, NIL, (fdw_private))
#else
#define pfs_create_foreignscan_path(root, rel, rows, startup, total, required_outer, fdw_private) \
	create_foreignscan_path((root), (rel), NULL, (rows), (startup), (total), \
							NIL, (required_outer), NULL, (fdw_private))
#endif

/* create_foreign_upper_path: the same additions (one row, no pathkeys, no outer plan). */
#if PG_VERSION_NUM >= 180000
#define pfs_create_foreign_upper_path(root, rel, target, startup, total, fdw_private) \
	create_foreign_upper_path((root), (rel), (target), 1, 0, (startup), (total), \
							  NIL, NULL, NIL, (fdw_private))
#elif PG_VERSION_NUM >= 170000
#define pfs_create_foreign_upper_path(root, rel, target, startup, total, fdw_private) \
	create_foreign_upper_path((root), (rel), (target), 1, (startup), (total), \
							  NIL, NULL, NIL, (fdw_private))
#else
#define pfs_create_foreign_upper_path(root, rel, target, startup, total, fdw_private) \
	create_foreign_upper_path((root), (rel), (target), 1, (startup), (total), \
							  NIL, NULL, (fdw_private))
#endif

/* The base relations a ForeignScan covers: PG16 added outer joins to fs_relids. */
#if PG_VERSION_NUM >= 160000
#define pfs_scan_base_relids(plan) ((plan)->fs_base_relids)
#else
#define pfs_scan_base_relids(plan) ((plan)->fs_relids)
#endif

/*
 * A function that does not return: PG18 replaced the pg_attribute_noreturn()
 * suffix with a pg_noreturn prefix (C11 _Noreturn); GCC and clang take the
 * attribute as a prefix too.
 */
#if PG_VERSION_NUM >= 180000
#define PFS_NORETURN pg_noreturn
#else
#define PFS_NORETURN pg_attribute_noreturn()
#endif

/* ANALYZE's pause for cost-based delay: PG18 added whether it is ANALYZE that pauses. */
#if PG_VERSION_NUM >= 180000
#define pfs_analyze_delay_point() vacuum_delay_point(true)
#else
#define pfs_analyze_delay_point() vacuum_delay_point()
#endif

/*
 * A wait event of the extension's own, which pg_stat_activity shows while a
 * backend waits in it (wait_event_type Extension): PG17 added named ones
 * (WaitEventExtensionNew; the id is kept in *event after the first call); before,
 * every extension's wait is the one named "Extension".
 */
#include "utils/wait_event.h"
static inline uint32
pfs_extension_wait_event(const char *name, uint32 *event)
{
#if PG_VERSION_NUM >= 170000
	if (*event == 0)
		*event = WaitEventExtensionNew(name);
	return *event;
#else
	(void) name;
	(void) event;
	return PG_WAIT_EXTENSION;
#endif
}

/* The aggregates a scan computes keep sums in 128 bits (aggregate.c). */
#ifndef HAVE_INT128
#error "perfschema_fdw needs a compiler with a 128-bit integer type"
#endif

/* PG18 records the module's name and version in the magic block. */
#ifdef PG_MODULE_MAGIC_EXT
#define PFS_MODULE_MAGIC PG_MODULE_MAGIC_EXT(.name = "perfschema_fdw", .version = "0.1")
#else
#define PFS_MODULE_MAGIC PG_MODULE_MAGIC
#endif

#endif							/* PERFSCHEMA_FDW_COMPAT_H */
