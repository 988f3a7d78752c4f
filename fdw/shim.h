/*-------------------------------------------------------------------------
 *
 * shim.h
 *	  Declarations shared by the C files of perfschema_fdw (the shim: the
 *	  only code that includes PostgreSQL headers).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PERFSCHEMA_FDW_SHIM_H
#define PERFSCHEMA_FDW_SHIM_H

#include "nodes/parsenodes.h"
#include "nodes/pg_list.h"
#include "utils/relcache.h"

#include "pfs_core.h"

/* The options of one foreign table, resolved through its server. */
typedef struct PfsTableOptions
{
	Oid			serverid;
	char	   *region;			/* server option "region": the file's path */
	char	   *table_name;		/* foreign table option "table" */
	int			table;			/* its index in the core's catalogue */
} PfsTableOptions;

/* option.c */
extern void pfs_get_table_options(Oid foreigntableid, PfsTableOptions *opts);
/* Maps the region table's columns to the foreign table's attributes (perfschema_fdw.c). */
extern void pfs_map_columns(Relation rel, const PfsTableOptions *opts, int *core_attr);

/* report.c */
extern void pfs_report_core_error(const PfsCoreError *err) pg_attribute_noreturn();

/* import.c */
extern List *pfsImportForeignSchema(ImportForeignSchemaStmt *stmt, Oid serverOid);

#endif							/* PERFSCHEMA_FDW_SHIM_H */
