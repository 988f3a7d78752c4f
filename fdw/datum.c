/*-------------------------------------------------------------------------
 *
 * datum.c
 *	  Datum conversion, all of it: the cells of the core's pieces as Datums
 *	  (scans, ANALYZE, aggregates), and Datums as the core's values and back
 *	  (writes, the overlay).  The region's text is UTF-8; a database of
 *	  another encoding gets converted copies.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/numeric.h"

#include "compat.h"

#include "shim.h"

/* Text must be converted between UTF-8 and the database encoding. */
static bool
convert_text(void)
{
	return GetDatabaseEncoding() != PG_UTF8 && GetDatabaseEncoding() != PG_SQL_ASCII;
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
	const PfsCoreColumnType *types = pfs_core_column_types(table);
	int			c,
				k = 0;
	char	   *space = palloc((sizeof(int) + 2 * sizeof(bool)) * Max(ncolumns, 1));

	/* one allocation: the ints first, aligned as palloc aligns */
	map->cell_attr = (int *) space;
	map->cell_text = (bool *) (space + sizeof(int) * Max(ncolumns, 1));
	map->cell_numeric = map->cell_text + Max(ncolumns, 1);
	for (c = 0; c < ncolumns; c++)
	{
		PfsCoreColumnType type;

		if (!wanted[c])
			continue;
		type = types != NULL ? types[c] : pfs_core_column_type(table, c);
		map->cell_attr[k] = core_attr[c];
		map->cell_text[k] = type == PFS_CORE_TEXT;
		map->cell_numeric[k] = type == PFS_CORE_NUMERIC;
		k++;
	}
	map->convert_text = convert_text();
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
 * datum_to_value
 *		A Datum as a core value (UTF-8 text, or int64).  A numeric column (a
 *		sum of times: the core only zeroes them) gives its value when it fits
 *		in int32, else INT64_MAX (not zero).
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
 * pfs_datums_to_row
 *		The Datums of a slot's attributes as a row of core values: region
 *		column c is attribute core_attr[c] (NULL when -1).
 */
void
pfs_datums_to_row(int ncolumns, const int *core_attr, const PfsCoreColumnType *types,
				  const Datum *values, const bool *isnull, PfsCoreValue *row)
{
	int			c;

	for (c = 0; c < ncolumns; c++)
	{
		int			attr = core_attr[c];

		if (attr < 0)
			datum_to_value((Datum) 0, true, types[c], &row[c]);
		else
			datum_to_value(values[attr], isnull[attr], types[c], &row[c]);
	}
}

/*
 * pfs_row_to_datums
 *		The values of a row of core values into the Datums of the attributes
 *		core_attr names (all of them, or only those the core changed); the
 *		other attributes keep theirs.
 */
void
pfs_row_to_datums(int ncolumns, const int *core_attr, const PfsCoreColumnType *types,
				  const PfsCoreValue *row, bool changed_only, Datum *values, bool *isnull)
{
	int			c;

	for (c = 0; c < ncolumns; c++)
	{
		int			attr = core_attr[c];
		const PfsCoreValue *v = &row[c];

		if (attr < 0 || (changed_only && !v->changed))
			continue;
		isnull[attr] = v->isnull;
		values[attr] = v->isnull ? (Datum) 0 : value_to_datum(v, types[c]);
	}
}
