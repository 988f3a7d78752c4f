/*-------------------------------------------------------------------------
 *
 * analyze.c
 *	  ANALYZE of a perfschema foreign table: a random sample of the region's
 *	  rows (reservoir sampling, as file_fdw), read in pieces like a scan, so
 *	  that the planner knows how values are spread (rows per thread, per
 *	  instrument) when it estimates conditions and joins.  The statistics age
 *	  as the program runs: ANALYZE again after its workload changes.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/sampling.h"

#include "shim.h"

/* Bytes of rows read at a time (the core's pieces), as scans. */
#define PFS_ANALYZE_PIECE_BYTES (1024 * 1024)

/* One row of a piece as a tuple in the current memory context. */
static HeapTuple
form_row(const PfsCellMap *map, TupleDesc tupdesc, const PfsCoreRowset *rs, size_t row,
		 Datum *values, bool *nulls, MemoryContext scratch)
{
	MemoryContext old = MemoryContextSwitchTo(scratch);	/* converted text */
	HeapTuple	tuple;

	pfs_row_values(map, rs, row, tupdesc->natts, values, nulls);
	MemoryContextSwitchTo(old);
	tuple = heap_form_tuple(tupdesc, values, nulls);	/* copies the values */
	MemoryContextReset(scratch);
	return tuple;
}

/*
 * acquire_sample_rows
 *		Up to targrows rows chosen at random among all the table's rows, in
 *		the caller's memory context; *totalrows: the rows read.
 */
static int
acquire_sample_rows(Relation rel, int elevel, HeapTuple *rows, int targrows,
					double *totalrows, double *totaldeadrows)
{
	PfsTableOptions opts;
	TupleDesc	tupdesc = RelationGetDescr(rel);
	PfsCellMap	map;
	int			ncolumns;
	bool	   *wanted;
	int		   *core_attr;
	int			c;
	Datum	   *values = palloc(sizeof(Datum) * Max(tupdesc->natts, 1));
	bool	   *nulls = palloc(sizeof(bool) * Max(tupdesc->natts, 1));
	MemoryContext scratch;
	PfsCoreRegion *region;
	PfsCoreScan *volatile scan;
	PfsCoreError err;
	ReservoirStateData rstate;
	double		rowstoskip = -1;
	double		seen = 0;
	int			numrows = 0;

	pfs_get_table_options(RelationGetRelid(rel), &opts);
	ncolumns = pfs_core_column_count(opts.table);
	wanted = palloc(sizeof(bool) * Max(ncolumns, 1));
	core_attr = palloc(sizeof(int) * Max(ncolumns, 1));
	pfs_map_columns(rel, &opts, core_attr);
	for (c = 0; c < ncolumns; c++)
		wanted[c] = core_attr[c] >= 0;
	pfs_cell_map(opts.table, wanted, core_attr, &map);
	scratch = AllocSetContextCreate(CurrentMemoryContext, "perfschema_fdw analyze",
									ALLOCSET_SMALL_SIZES);

	region = pfs_region_of(&opts);
	scan = pfs_core_scan_begin(region, opts.table, wanted, NULL, 0, VARHDRSZ,
							   PFS_ANALYZE_PIECE_BYTES, &err);
	if (scan == NULL)
		pfs_report_core_error(&err);
	pfs_report_scan_warnings(scan);

	reservoir_init_selection_state(&rstate, targrows);
	PG_TRY();
	{
		for (;;)
		{
			const PfsCoreRowset *rs;
			size_t		r;

			pfs_analyze_delay_point();
			rs = pfs_next_piece(scan);
			for (r = 0; r < rs->nrows; r++)
			{
				if (numrows < targrows)
					rows[numrows++] = form_row(&map, tupdesc, rs, r, values, nulls, scratch);
				else
				{
					/* Algorithm Z, as acquire_sample_rows of analyze.c */
					if (rowstoskip < 0)
						rowstoskip = reservoir_get_next_S(&rstate, seen, targrows);
					if (rowstoskip <= 0)
					{
						int			replaced = (int) (targrows * sampler_random_fract(&rstate.randstate));

						heap_freetuple(rows[replaced]);
						rows[replaced] = form_row(&map, tupdesc, rs, r, values, nulls, scratch);
					}
					rowstoskip -= 1;
				}
				seen += 1;
			}
			if (rs->last)
				break;
		}
	}
	PG_FINALLY();
	{
		pfs_core_scan_end(scan);
	}
	PG_END_TRY();
	MemoryContextDelete(scratch);

	*totalrows = seen;
	*totaldeadrows = 0;
	ereport(elevel,
			(errmsg("\"%s\": region table \"%s\" has %.0f rows; %d rows in sample",
					RelationGetRelationName(rel), opts.table_name, seen, numrows)));
	return numrows;
}

/*
 * pfsAnalyzeForeignTable
 *		Every perfschema foreign table can be analyzed; the region has no
 *		pages (one, for ANALYZE's bookkeeping).
 */
bool
pfsAnalyzeForeignTable(Relation relation, AcquireSampleRowsFunc *func,
					   BlockNumber *totalpages)
{
	*func = acquire_sample_rows;
	*totalpages = 1;
	return true;
}
