/*-------------------------------------------------------------------------
 *
 * columns.c
 *	  Maps the columns of a foreign table to the columns of its region table,
 *	  for scans (perfschema_fdw.c), ANALYZE (analyze.c) and writes (modify.c),
 *	  and reads the core's pieces and turns their cells into Datums.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/numeric.h"
#include "utils/rel.h"

#include "compat.h"

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

/*
 * pfs_cell_map
 *		For a scan returning the region columns marked in wanted (core_attr as
 *		pfs_map_columns gives it): the attribute of each cell of a piece (the
 *		wanted columns in ascending order) and whether it is text.
 */
void
pfs_cell_map(int table, const bool *wanted, const int *core_attr, PfsCellMap *map)
{
	int			ncolumns = pfs_core_column_count(table);
	int			c,
				k = 0;

	map->cell_attr = palloc(sizeof(int) * Max(ncolumns, 1));
	map->cell_text = palloc(sizeof(bool) * Max(ncolumns, 1));
	map->cell_numeric = palloc(sizeof(bool) * Max(ncolumns, 1));
	for (c = 0; c < ncolumns; c++)
	{
		if (!wanted[c])
			continue;
		map->cell_attr[k] = core_attr[c];
		map->cell_text[k] = pfs_core_column_type(table, c) == PFS_CORE_TEXT;
		map->cell_numeric[k] = pfs_core_column_type(table, c) == PFS_CORE_NUMERIC;
		k++;
	}
	map->convert_text = GetDatabaseEncoding() != PG_UTF8 &&
		GetDatabaseEncoding() != PG_SQL_ASCII;
}

/*
 * text_datum
 *		A text cell as a Datum.  In a UTF-8 (or SQL_ASCII) database it points
 *		into the piece: the varlena header goes in the room the core left before
 *		each text.  Otherwise it is converted from UTF-8 (the region's encoding)
 *		in the current memory context.
 */
static Datum
text_datum(const PfsCellMap *map, const PfsCoreRowset *rows, const PfsCoreCell *cell)
{
	char	   *text = rows->text + cell->value;
	char	   *converted;

	if (!map->convert_text)
	{
		SET_VARSIZE(text, VARHDRSZ + cell->len);
		return PointerGetDatum(text);
	}
	text += VARHDRSZ;
	converted = pg_any_to_server(text, (int) cell->len, PG_UTF8);
	if (converted == text)		/* nothing to convert: not NUL-terminated */
		return PointerGetDatum(cstring_to_text_with_len(text, (int) cell->len));
	return CStringGetTextDatum(converted);
}

/*
 * numeric_datum
 *		A numeric cell as a Datum: from the int64 when it fits (len 0), else
 *		from the decimal digits the core wrote in the piece's text.
 */
static Datum
numeric_datum(const PfsCoreRowset *rows, const PfsCoreCell *cell)
{
	if (cell->len == 0)
		return NumericGetDatum(int64_to_numeric(cell->value));
	return DirectFunctionCall3(numeric_in, CStringGetDatum(rows->text + cell->value + VARHDRSZ),
							   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
}

/*
 * pfs_row_values
 *		Row `row` of a piece as the Datums of its attributes; attributes
 *		without a cell are NULL (natts of them).  Cells are for distinct
 *		attributes: when there are natts of them (compact scan tuples), every
 *		attribute gets its value from one.
 */
void
pfs_row_values(const PfsCellMap *map, const PfsCoreRowset *rows, size_t row, int natts,
			   Datum *values, bool *isnull)
{
	const PfsCoreCell *cells = rows->cells + row * rows->ncells;
	int			k;

	if (rows->ncells < natts)
		memset(isnull, true, sizeof(bool) * natts);
	for (k = 0; k < rows->ncells; k++)
	{
		int			attr = map->cell_attr[k];

		isnull[attr] = cells[k].isnull;
		if (cells[k].isnull)
			values[attr] = (Datum) 0;
		else if (map->cell_text[k])
			values[attr] = text_datum(map, rows, &cells[k]);
		else if (map->cell_numeric[k])
			values[attr] = numeric_datum(rows, &cells[k]);
		else
			values[attr] = Int64GetDatum(cells[k].value);
	}
}

/*
 * pfs_region_of
 *		The regions the server of a foreign table reads: its region file, or
 *		the region files of its directory.
 */
PfsCoreRegion *
pfs_region_of(const PfsTableOptions *opts)
{
	PfsCoreError err;
	PfsCoreRegion *region;

	region = opts->directory
		? pfs_core_region_directory_get(opts->serverid, opts->region, &err)
		: pfs_core_region_get(opts->serverid, opts->region, &err);
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
