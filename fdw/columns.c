/*-------------------------------------------------------------------------
 *
 * columns.c
 *	  Maps the columns of a foreign table to the columns of its region table,
 *	  for planning (scan_plan.c), scans (scan.c), ANALYZE (analyze.c) and
 *	  writes (modify.c), and names their SQL types.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/rel.h"

#include "shim.h"

/*
 * pfs_map_columns
 *		core_attr[c] = the attribute number (0-based) of the foreign table's
 *		column for region column c, or -1 when the table leaves it out.  Every
 *		column of the foreign table must be a column of the region table, with
 *		its type.
 */
void
pfs_map_columns(Relation rel, const PfsTableOptions *opts, int *core_attr)
{
	TupleDesc	tupdesc = RelationGetDescr(rel);
	int			ncolumns = pfs_core_column_count(opts->table);
	int			i;

	for (i = 0; i < ncolumns; i++)
		core_attr[i] = -1;
	for (i = 0; i < tupdesc->natts; i++)
	{
		Form_pg_attribute attr = TupleDescAttr(tupdesc, i);
		const char *name = NameStr(attr->attname);
		int			column;
		PfsCoreColumnType type;

		if (attr->attisdropped)
			continue;
		column = pfs_core_column_find(opts->table, name);
		if (column < 0)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_COLUMN_NAME),
					 errmsg("column \"%s\" of foreign table \"%s\" does not exist in performance_schema table \"%s\"",
							name, RelationGetRelationName(rel), opts->table_name),
					 errhint("Use IMPORT FOREIGN SCHEMA performance_schema to create the foreign tables.")));
		type = pfs_core_column_type(opts->table, column);
		if (attr->atttypid != pfs_column_type_oid(opts->table, column))
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
					 errmsg("column \"%s\" of foreign table \"%s\" must have type %s",
							name, RelationGetRelationName(rel), pfs_column_type_name(type)),
					 errhint("Use IMPORT FOREIGN SCHEMA performance_schema to create the foreign tables.")));
		core_attr[column] = i;
	}
}

/*
 * pfs_attr_columns
 *		attr_column[a] = the region column of attribute a + 1 when its name and
 *		type match one, else -1.  Raises no error (the planner calls it; the
 *		scan reports mismatched columns).
 */
void
pfs_attr_columns(Relation rel, const PfsTableOptions *opts, int *attr_column)
{
	TupleDesc	tupdesc = RelationGetDescr(rel);
	int			i;

	for (i = 0; i < tupdesc->natts; i++)
	{
		Form_pg_attribute attr = TupleDescAttr(tupdesc, i);
		int			column = attr->attisdropped ? -1 :
			pfs_core_column_find(opts->table, NameStr(attr->attname));

		attr_column[i] = column >= 0 && attr->atttypid == pfs_column_type_oid(opts->table, column) ?
			column : -1;
	}
}

/* The SQL type of a region column. */
Oid
pfs_column_type_oid(int table, int column)
{
	PfsCoreColumnType type = pfs_core_column_type(table, column);

	return type == PFS_CORE_TEXT ? TEXTOID :
		type == PFS_CORE_FLOAT8 ? FLOAT8OID :
		type == PFS_CORE_TIMESTAMPTZ ? TIMESTAMPTZOID :
		type == PFS_CORE_NUMERIC ? NUMERICOID : INT8OID;
}

const char *
pfs_column_type_name(int type)
{
	switch (type)
	{
		case PFS_CORE_TEXT:
			return "text";
		case PFS_CORE_FLOAT8:
			return "double precision";
		case PFS_CORE_TIMESTAMPTZ:
			return "timestamp with time zone";
		case PFS_CORE_NUMERIC:
			return "numeric";
		default:
			return "bigint";
	}
}
