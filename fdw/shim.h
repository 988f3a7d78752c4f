/*-------------------------------------------------------------------------
 *
 * shim.h
 *	  Declarations shared by the C files of perfschema_fdw (the shim: the
 *	  only code that includes PostgreSQL headers), under the file that owns
 *	  each.  One file per concern, as contrib/postgres_fdw:
 *
 *	  perfschema_fdw.c	module entry, settings, the handler
 *	  option.c			the validator, the options of a foreign table
 *	  scan_plan.c		planning a scan		scan.c		executing it
 *	  modify_plan.c		planning a write	modify.c	executing it
 *	  xact.c			transaction callbacks: a transaction's writes at commit
 *	  overlay.c			a transaction's pending writes in its scans
 *	  pushdown.c, scan_tlist.c, aggregate.c		what a scan does itself
 *	  analyze.c, import.c	ANALYZE, IMPORT FOREIGN SCHEMA
 *	  columns.c			columns of a foreign table to the region table's
 *	  datum.c			Datum conversion, all of it
 *	  report.c			the core's errors as ereports
 *
 *	  The callbacks come first, in the order PostgreSQL calls them, then
 *	  what they share.  All of the files call the C++ core through
 *	  pfs_core.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef PERFSCHEMA_FDW_SHIM_H
#define PERFSCHEMA_FDW_SHIM_H

#include "foreign/fdwapi.h"
#include "nodes/parsenodes.h"
#include "nodes/pathnodes.h"
#include "nodes/pg_list.h"
#include "utils/relcache.h"

#include "compat.h"
#include "pfs_core.h"

/* The options of one foreign table, resolved through its server. */
typedef struct PfsTableOptions
{
	Oid			serverid;
	char	   *region;			/* server option "region": the file's path, or
								 * "region_directory": the directory's */
	bool		directory;		/* region is a directory of region files */
	bool		follow_symlinks;	/* server option "follow_symlinks" */
	char	   *table_name;		/* foreign table option "table" */
	int			table;			/* its index in the core's catalogue */
} PfsTableOptions;

/* perfschema_fdw.c: the settings perfschema_fdw.pushdown and .pushdown_aggregates */
extern bool pfs_pushdown;
extern bool pfs_pushdown_aggregates;

/* ---- Callbacks, in the order PostgreSQL calls them ---- */

/*
 * scan_plan.c: planning a scan.  GetForeignRelSize estimates the rows,
 * GetForeignPaths adds the paths, GetForeignUpperPaths a path computing the
 * aggregates (after the scan's paths, for a query without GROUP BY), and
 * GetForeignPlan makes the plan of the path chosen.
 */
extern void pfsGetForeignRelSize(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid);
extern void pfsGetForeignPaths(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid);
extern void pfsGetForeignUpperPaths(PlannerInfo *root, UpperRelationKind stage,
									RelOptInfo *input_rel, RelOptInfo *output_rel, void *extra);
extern ForeignScan *pfsGetForeignPlan(PlannerInfo *root, RelOptInfo *foreignrel,
									  Oid foreigntableid, ForeignPath *best_path, List *tlist,
									  List *scan_clauses, Plan *outer_plan);

/*
 * scan.c: executing it.  BeginForeignScan, then IterateForeignScan for each
 * row, ReScanForeignScan to start again (a nested loop's inner side, new
 * parameters), RecheckForeignScan when EvalPlanQual replays a row, and
 * EndForeignScan; EXPLAIN calls ExplainForeignScan between Begin and End.
 */
extern void pfsBeginForeignScan(ForeignScanState *node, int eflags);
extern TupleTableSlot *pfsIterateForeignScan(ForeignScanState *node);
extern void pfsReScanForeignScan(ForeignScanState *node);
extern bool pfsRecheckForeignScan(ForeignScanState *node, TupleTableSlot *slot);
extern void pfsEndForeignScan(ForeignScanState *node);
extern void pfsExplainForeignScan(ForeignScanState *node, struct ExplainState *es);

/*
 * modify_plan.c: planning UPDATE, INSERT and DELETE.  AddForeignUpdateTargets
 * comes first (the planner's preprocessing, before GetForeignRelSize of the
 * scan that finds the rows), PlanForeignModify after that scan's
 * GetForeignPlan.  IsForeignRelUpdatable is asked when the executor starts
 * the statement (and by the rewriter, for a view over the table).
 */
extern void pfsAddForeignUpdateTargets(PlannerInfo *root, Index rtindex,
									   RangeTblEntry *target_rte, Relation target_relation);
extern List *pfsPlanForeignModify(PlannerInfo *root, ModifyTable *plan, Index resultRelation,
								  int subplan_index);
extern int	pfsIsForeignRelUpdatable(Relation rel);

/*
 * modify.c: executing them.  BeginForeignModify (after BeginForeignScan of
 * the scan that finds the rows), ExecForeignInsert/Update/Delete for each
 * row, EndForeignModify (before that scan's EndForeignScan).  COPY FROM
 * (and INSERT routed to a partition) has BeginForeignInsert and
 * EndForeignInsert around its ExecForeignInsert; TRUNCATE is
 * ExecForeignTruncate alone.
 */
extern void pfsBeginForeignModify(ModifyTableState *mtstate, ResultRelInfo *rinfo,
								  List *fdw_private, int subplan_index, int eflags);
extern TupleTableSlot *pfsExecForeignInsert(EState *estate, ResultRelInfo *rinfo,
											TupleTableSlot *slot, TupleTableSlot *planSlot);
extern TupleTableSlot *pfsExecForeignUpdate(EState *estate, ResultRelInfo *rinfo,
											TupleTableSlot *slot, TupleTableSlot *planSlot);
extern TupleTableSlot *pfsExecForeignDelete(EState *estate, ResultRelInfo *rinfo,
											TupleTableSlot *slot, TupleTableSlot *planSlot);
extern void pfsEndForeignModify(EState *estate, ResultRelInfo *rinfo);
extern void pfsBeginForeignInsert(ModifyTableState *mtstate, ResultRelInfo *rinfo);
extern void pfsEndForeignInsert(EState *estate, ResultRelInfo *rinfo);
extern void pfsExecForeignTruncate(List *rels, DropBehavior behavior, bool restart_seqs);

/*
 * xact.c: the transaction callbacks, registered by the first write (modify.c):
 * PRE_COMMIT applies the transaction's writes, COMMIT and ABORT forget
 * them, a subtransaction's end keeps or drops its part.
 */
extern void pfs_xact_register(void);
/* The transaction's start to the core, before a region is looked up. */
extern void pfs_give_transaction_clock(void);

/* analyze.c: ANALYZE */
extern bool pfsAnalyzeForeignTable(Relation relation, AcquireSampleRowsFunc *func,
								   BlockNumber *totalpages);

/* import.c: IMPORT FOREIGN SCHEMA */
extern List *pfsImportForeignSchema(ImportForeignSchemaStmt *stmt, Oid serverOid);

/* ---- What the callbacks share ---- */

/* option.c (also the validator, perfschema_fdw_validator) */
extern void pfs_get_table_options(Oid foreigntableid, PfsTableOptions *opts);
/* The same for an opened foreign table; returns its table's index. */
extern int	pfs_get_relation_options(Relation rel, PfsTableOptions *opts);

/* scan.c: what scans and ANALYZE share */
/* The regions a foreign table's server reads: NULL and why when they cannot be read, */
extern PfsCoreRegion *pfs_region_lookup(const PfsTableOptions *opts, PfsCoreError *err);
/* ... or with the error reported (ereport). */
extern PfsCoreRegion *pfs_region_of(const PfsTableOptions *opts);
/* The next piece of a core scan; errors are reported (ereport), skipped regions as WARNINGs. */
extern const PfsCoreRowset *pfs_next_piece(PfsCoreScan *scan);

/* columns.c: the region table's columns to the foreign table's attributes */
extern void pfs_map_columns(Relation rel, const PfsTableOptions *opts, int *core_attr);
/* The region column of each attribute whose name and type match one (else -1); no error. */
extern void pfs_attr_columns(Relation rel, const PfsTableOptions *opts, int *attr_column);
extern Oid	pfs_column_type_oid(int table, int column);
/* The SQL type of a column type ("bigint", "text", ...). */
extern const char *pfs_column_type_name(int type);

/* relation_cache.c: a foreign table's options and column map, kept between scans */
typedef struct PfsRelationInfo
{
	PfsTableOptions opts;
	int			ncolumns;		/* the region table's columns */
	int		   *core_attr;		/* pfs_map_columns' map */
} PfsRelationInfo;
extern const PfsRelationInfo *pfs_relation_info(Relation rel);

/*
 * datum.c: Datum conversion.  The cells of the core's pieces as Datums: the
 * attribute of each cell, and whether it is text (pfs_cell_map builds it once
 * per scan).
 */
typedef struct PfsCellMap
{
	int		   *cell_attr;		/* attribute (0-based) of each cell */
	bool	   *cell_text;		/* is the cell a text column */
	bool	   *cell_numeric;	/* is the cell a numeric column */
	bool		convert_text;	/* database encoding is not UTF-8 */
} PfsCellMap;

extern void pfs_cell_map(int table, const bool *wanted, const int *core_attr, PfsCellMap *map);
extern void pfs_row_values(const PfsCellMap *map, const PfsCoreRowset *rows, size_t row,
						   int natts, Datum *values, bool *isnull);
/* A slot's Datums as core values; region column c is attribute core_attr[c] (or -1). */
extern void pfs_datums_to_row(int ncolumns, const int *core_attr, const PfsCoreColumnType *types,
							  const Datum *values, const bool *isnull, PfsCoreValue *row);
/* Core values into a slot's Datums: every mapped column, or those the core changed. */
extern void pfs_row_to_datums(int ncolumns, const int *core_attr, const PfsCoreColumnType *types,
							  const PfsCoreValue *row, bool changed_only, Datum *values,
							  bool *isnull);

/*
 * overlay.c: the overlay of a scan, which shows a transaction its own pending
 * changes (NULL when the transaction changed nothing the scan shows).
 * pfs_overlay_begin runs in BeginForeignScan, in the scan's memory context
 * (which frees it), after the columns are mapped and before the rows are
 * copied: it marks every mapped column wanted (the overlay needs the key).
 * core_attr: the slot attribute of each region column, or -1.
 */
typedef struct PfsOverlay PfsOverlay;

extern PfsOverlay *pfs_overlay_begin(ForeignScanState *node, const PfsTableOptions *opts,
									 bool *wanted, const int *core_attr);
/* Applies the overlay to the row in slot; false when the row is gone. */
extern bool pfs_overlay_row(PfsOverlay *overlay, TupleTableSlot *slot);
/* After the last row: stores the next row the transaction inserted. */
extern bool pfs_overlay_extra_row(PfsOverlay *overlay, TupleTableSlot *slot);
extern void pfs_overlay_rewind(PfsOverlay *overlay);

/*
 * pushdown.c: the WHERE conditions the reader evaluates.  A pushed qual tests
 * region column `column`; its operand is an expression evaluated when the
 * scan starts (NULL for IS [NOT] NULL and LIKE, whose prefix is known when
 * planning).  exact: the reader's test is the clause's (else the executor
 * checks the clause again).
 */
typedef struct PfsPushedQual
{
	int			column;
	PfsCoreQualOp op;
	bool		text;			/* text operands */
	bool		array;			/* the operand is an array (= ANY, IN) */
	bool		exact;
	Oid			operand_type;	/* of the operand, or of its elements */
	Expr	   *operand;
	char	   *prefix;			/* LIKE: the pattern's literal prefix */
} PfsPushedQual;

extern bool pfs_classify_clause(PlannerInfo *root, RelOptInfo *baserel,
								const PfsTableOptions *opts, const int *attr_column,
								int natts, Expr *clause, PfsPushedQual *out);
extern List *pfs_pushed_qual_to_list(const PfsPushedQual *q, int operand_index);
extern void pfs_pushed_qual_from_list(List *item, PfsPushedQual *q, int *operand_index);
/* The core's form of a qual whose operand is value; false: no row can pass. */
extern bool pfs_make_core_qual(const PfsPushedQual *q, Datum value, bool isnull,
							   PfsCoreQual *out);
extern const char *pfs_qual_op_name(PfsCoreQualOp op);

/* scan_tlist.c: scan tuples of only the columns the query reads. */
extern bool pfs_scan_may_be_rechecked(PlannerInfo *root, RelOptInfo *rel);
extern List *pfs_compact_scan_tlist(PlannerInfo *root, RelOptInfo *rel, List *tlist,
									List *local_clauses, List *wanted);
extern int *pfs_scan_attnums(const ForeignScan *plan, int *natts);

/*
 * aggregate.c: aggregates the scan computes itself (no GROUP BY).  The
 * descriptors go in fdw_private; the scan's tuple has one attribute per
 * aggregate, in their order.
 */
typedef struct PfsAggregates PfsAggregates;

extern List *pfs_pushable_aggregates(RelOptInfo *baserel, const int *attr_column, int natts,
									 PathTarget *target, List **tlist, List **attnums);
extern char *pfs_aggregates_describe(List *descriptors, Oid relid);
extern PfsAggregates *pfs_aggregates_begin(List *descriptors);
extern void pfs_aggregates_reset(PfsAggregates *a);
/* Every row of a piece (when no pending changes apply to the rows). */
extern void pfs_aggregates_add_piece(PfsAggregates *a, const PfsCellMap *map,
									 const PfsCoreRowset *rows);
/* One row in a slot of the foreign table's attributes. */
extern void pfs_aggregates_add_row(PfsAggregates *a, TupleTableSlot *slot);
extern void pfs_aggregates_store(PfsAggregates *a, TupleTableSlot *slot);

/* report.c */
PFS_NORETURN extern void pfs_report_core_error(const PfsCoreError *err);
PFS_NORETURN extern void pfs_report_write_error(const PfsCoreWriteError *err);
/* Each region a scan skipped (a directory's damaged region file) as a WARNING. */
extern void pfs_report_scan_warnings(PfsCoreScan *scan);

#endif							/* PERFSCHEMA_FDW_SHIM_H */
