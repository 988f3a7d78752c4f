/*-------------------------------------------------------------------------
 *
 * pfs_core.h
 *	  The C ABI of the perfschema_fdw core: the table catalogue, the
 *	  per-backend cache of mapped regions, and scans into compact row sets.
 *
 * The core is C++ (the fdw/core_*.cpp files, over the reader library) and
 * includes no PostgreSQL header; the C shim (the .c files of fdw/) is the
 * only code that talks to PostgreSQL.  Every function here is noexcept:
 * failures come back as a PfsCoreError filled in by the core (plain data,
 * PostgreSQL message style), and the shim turns it into an ereport only after
 * the core has returned, so no C++ exception reaches PostgreSQL and no
 * longjmp crosses a C++ frame.
 *
 * Memory: the catalogue strings are static; regions belong to the cache;
 * a row set belongs to the caller until pfs_core_rowset_free.
 *
 *-------------------------------------------------------------------------
 */
#ifndef PFS_CORE_H
#define PFS_CORE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define PFS_CORE_NOEXCEPT noexcept
extern "C"
{
#else
#define PFS_CORE_NOEXCEPT
#endif

/* What went wrong; the shim maps each kind to an SQLSTATE. */
typedef enum PfsCoreErrorKind
{
	PFS_CORE_OK = 0,
	PFS_CORE_FILE_NOT_FOUND,	/* the region file does not exist */
	PFS_CORE_PERMISSION,		/* the file cannot be opened */
	PFS_CORE_IO,				/* other system error */
	PFS_CORE_CORRUPTED,			/* not a region, inconsistent, truncated,
								 * invalid records */
	PFS_CORE_BAD_VERSION,		/* a layout version this build cannot read */
	PFS_CORE_OUT_OF_MEMORY,
	PFS_CORE_INTERRUPTED,		/* the interrupt flag was raised mid-scan or
								 * mid-wait */
	PFS_CORE_CHANGED,			/* the file shrank while it was read */
	PFS_CORE_WRONG_TYPE,		/* a directory, FIFO, socket or device, or a
								 * symbolic or hard link not followed */
	PFS_CORE_LOCK_TIMEOUT,		/* the setup lock was not free in time */
	PFS_CORE_INTERNAL			/* a bug: unexpected exception, bad argument */
} PfsCoreErrorKind;

#define PFS_CORE_TEXT_LEN 512

typedef struct PfsCoreError
{
	PfsCoreErrorKind kind;
	char		message[PFS_CORE_TEXT_LEN]; /* lower case, no period */
	char		detail[PFS_CORE_TEXT_LEN];	/* full sentence or empty */
	char		hint[PFS_CORE_TEXT_LEN];	/* full sentence or empty */
} PfsCoreError;

/* ---- Catalogue: the tables the reader provides, in its order ---- */

typedef enum PfsCoreColumnType
{
	PFS_CORE_INT64 = 0,			/* bigint */
	PFS_CORE_TEXT = 1,			/* text */
	PFS_CORE_FLOAT8 = 2,		/* double precision: the cell's value holds its bits */
	PFS_CORE_TIMESTAMPTZ = 3,	/* timestamp with time zone: microseconds since
								 * 2000-01-01 00:00 UTC (PostgreSQL's epoch) */
	PFS_CORE_NUMERIC = 4		/* numeric, a non-negative integer below 2^128:
								 * a cell with len 0 holds it in value (it fits
								 * in int64); otherwise value is the offset of a
								 * text block (as text) holding its decimal
								 * digits, len of them, then a NUL */
} PfsCoreColumnType;

/* Builds the catalogue (call once at load time); false if out of memory. */
extern bool pfs_core_init(void) PFS_CORE_NOEXCEPT;
extern int	pfs_core_table_count(void) PFS_CORE_NOEXCEPT;
extern const char *pfs_core_table_name(int table) PFS_CORE_NOEXCEPT;
/* Index of the table with this exact name, or -1. */
extern int	pfs_core_table_find(const char *name) PFS_CORE_NOEXCEPT;
extern int	pfs_core_column_count(int table) PFS_CORE_NOEXCEPT;
extern const char *pfs_core_column_name(int table, int column) PFS_CORE_NOEXCEPT;
extern PfsCoreColumnType pfs_core_column_type(int table, int column) PFS_CORE_NOEXCEPT;
/* Every column's type (pfs_core_column_count of them), or NULL (out of memory). */
extern const PfsCoreColumnType *pfs_core_column_types(int table) PFS_CORE_NOEXCEPT;
extern bool pfs_core_column_nullable(int table, int column) PFS_CORE_NOEXCEPT;
/* Index of the column with this exact name in the table, or -1. */
extern int	pfs_core_column_find(int table, const char *name) PFS_CORE_NOEXCEPT;

/*
 * Every table has columns the reader does not: process_id and program (the
 * process that wrote the row, from its region's header) after the reader's,
 * and status also region_file (the file the row comes from).  They are the
 * last columns of pfs_core_column_count; IMPORT FOREIGN SCHEMA declares them
 * for servers that read a directory.
 */
extern int	pfs_core_extra_column_count(int table) PFS_CORE_NOEXCEPT;

/* ---- Regions: mapped once per backend and server ---- */

/* What a server reads: one region file, or the region files of a directory. */
typedef struct PfsCoreRegion PfsCoreRegion;

/*
 * The region of a server (key: its OID) at path.  Mapped on first use and
 * kept; mapped again when the path differs from the cached one or the file
 * changed (device, inode, size or modification time), which is checked once
 * per transaction (a region that faulted, at every call).  The pointer stays
 * valid until the next call of pfs_core_region_get or
 * pfs_core_region_forget_all: do not keep it across calls into PostgreSQL
 * code that may run invalidation callbacks.  NULL and *err on failure.
 */
extern PfsCoreRegion *pfs_core_region_get(uint32_t key, const char *path,
										  PfsCoreError *err) PFS_CORE_NOEXCEPT;
/*
 * The regions of the directory at path (server option region_directory), with
 * the same cache: every regular file in it but hidden ones (".name") and the
 * agent's temporary files ("*.tmp", "*.tmp.XXXXXXXX"), listed again at each
 * call, each mapped while it is unchanged.  A file that is not a readable
 * region, and a symbolic link or hard link unless the server follows symbolic
 * links, is kept as a damaged member (see pfs_core_region_damage): scans skip
 * it with a warning.  NULL and *err only when the
 * directory itself cannot be listed.
 */
extern PfsCoreRegion *pfs_core_region_directory_get(uint32_t key, const char *path,
													PfsCoreError *err) PFS_CORE_NOEXCEPT;
/* The region files of a server (1 for a one-file server). */
extern int	pfs_core_region_count(const PfsCoreRegion *region) PFS_CORE_NOEXCEPT;
/* True and *err (why it cannot be read) when member is a damaged file. */
extern bool pfs_core_region_damage(const PfsCoreRegion *region, int member,
								   PfsCoreError *err) PFS_CORE_NOEXCEPT;
/* For CREATE and ALTER SERVER: false and *err when path exists and is not a directory. */
extern bool pfs_core_check_region_directory(const char *path, PfsCoreError *err) PFS_CORE_NOEXCEPT;
/*
 * For CREATE and ALTER SERVER: false and *err (PFS_CORE_WRONG_TYPE) when path
 * exists and is not a regular file (a directory, FIFO, socket or device).  A
 * missing file is accepted: the program may create it later.  Never blocks.
 */
extern bool pfs_core_check_region_path(const char *path, PfsCoreError *err) PFS_CORE_NOEXCEPT;
/*
 * Server option follow_symlinks of the server whose region (or region
 * directory) is path: the core opens that path, and the files of that
 * directory, through a symbolic link (and takes the directory's hard links)
 * only when follow is true.  Set whenever a server's options are resolved,
 * before any call that names the path.
 */
extern void pfs_core_set_follow_symlinks(const char *path, bool follow) PFS_CORE_NOEXCEPT;
/* Unmaps every cached region (server options changed or a server dropped). */
extern void pfs_core_region_forget_all(void) PFS_CORE_NOEXCEPT;
/*
 * The transaction ended (committed or aborted): the next transaction checks
 * the servers' region files again (a one-file server's at most once per
 * millisecond).
 */
extern void pfs_core_transaction_end(void) PFS_CORE_NOEXCEPT;
/*
 * The time the current transaction started, microseconds since the Unix epoch
 * (PostgreSQL's transaction start timestamp): the core's clock for the
 * transaction, which it otherwise reads itself.
 */
extern void pfs_core_transaction_clock(int64_t unix_us) PFS_CORE_NOEXCEPT;
/* Number of regions mapped now (for tests). */
extern int	pfs_core_region_cached(void) PFS_CORE_NOEXCEPT;
/*
 * At most limit files of region directories stay mapped between scans (GUC
 * perfschema_fdw.max_mapped_regions; 1024 until set; at least 1): the least
 * recently read are unmapped first.  Every mapping takes a VMA, page tables and
 * a slot of the SIGBUS guard (and a file descriptor while its provider is
 * alive), so a directory of more files than that is read a file at a time, each
 * mapped when a scan reaches it.
 */
extern void pfs_core_set_max_mapped_regions(int limit) PFS_CORE_NOEXCEPT;
/*
 * The pages of regions that scans went past stay in the backend's resident set
 * up to bytes in all (256 MiB until set), then the region that has held them
 * longest releases its pages (they stay in the page cache).  For tests.
 */
extern void pfs_core_set_resident_budget(uint64_t bytes) PFS_CORE_NOEXCEPT;
/*
 * A table's row count as the provider's counters tell it without a scan (the
 * slots of history_long claimed so far, the threads created so far), for the
 * planner.
 */
extern double pfs_core_estimated_rows(const PfsCoreRegion *region, int table) PFS_CORE_NOEXCEPT;

/* ---- Scans: a table's rows, in pieces of bounded size ---- */

/*
 * One cell of a row set.  int64 columns: value.  text columns: value is the
 * offset in PfsCoreRowset.text of a block made of text_prefix bytes reserved
 * for the caller (left uninitialized; the shim writes a varlena header there)
 * followed by len bytes of UTF-8, not NUL-terminated.  Blocks start on 8-byte
 * boundaries.
 */
typedef struct PfsCoreCell
{
	int64_t		value;
	uint32_t	len;
	bool		isnull;
} PfsCoreCell;

typedef struct PfsCoreRowset
{
	size_t		nrows;
	int			ncells;			/* cells per row: the wanted columns */
	const int  *columns;		/* table column of each cell, ascending */
	const PfsCoreCell *cells;	/* nrows * ncells, row by row */
	char	   *text;			/* text blocks (writable: see PfsCoreCell) */
	bool		last;			/* no rows follow these */
} PfsCoreRowset;

/*
 * A condition the scan evaluates itself (pushed down from WHERE): column op
 * operand(s).  Every condition of a scan must hold (AND).  The tests are SQL's:
 * a NULL value fails all of them but IS NULL.  Text compares UTF-8 bytes: push
 * text conditions only under a deterministic collation.
 */
typedef enum PfsCoreQualOp
{
	PFS_QUAL_EQ = 0,			/* = operand */
	PFS_QUAL_LT,				/* < operand (bigint columns) */
	PFS_QUAL_LE,
	PFS_QUAL_GT,
	PFS_QUAL_GE,
	PFS_QUAL_IN,				/* = one of the operands */
	PFS_QUAL_PREFIX,			/* starts with the operand (text) */
	PFS_QUAL_IS_NULL,
	PFS_QUAL_IS_NOT_NULL
} PfsCoreQualOp;

typedef struct PfsCoreQual
{
	int			column;			/* table column */
	PfsCoreQualOp op;
	bool		text;			/* operands are text (else int64) */
	int			noperands;
	const int64_t *ints;		/* int64 operands */
	const char *const *texts;	/* text operands (UTF-8) and their lengths */
	const uint32_t *lens;
} PfsCoreQual;

typedef struct PfsCoreScan PfsCoreScan;

/*
 * Starts a scan of a table of a region.  wanted[c] says whether column c is
 * returned (NULL: every column); unwanted columns get no cell.  The scan
 * evaluates quals itself (the operands are copied) and keeps the region's
 * mapping alive until pfs_core_scan_end.  Rows come in pieces of about
 * piece_bytes: the history_long tables are read piece by piece, the others in
 * one piece.  NULL and *err on failure.
 */
extern PfsCoreScan *pfs_core_scan_begin(PfsCoreRegion *region, int table, const bool *wanted,
										const PfsCoreQual *quals, int nquals,
										size_t text_prefix, size_t piece_bytes,
										PfsCoreError *err) PFS_CORE_NOEXCEPT;
/*
 * The next piece of rows (last set on the final one; it may be empty), valid
 * until the next call on the scan.  interrupt, if not NULL, is polled during the
 * copy: when it becomes non-zero the call stops with PFS_CORE_INTERRUPTED and
 * may be made again (the piece is read again).  Rows the reader had to skip
 * because an index inside them was invalid make it fail with
 * PFS_CORE_CORRUPTED (a region is never shown with rows silently missing).
 * NULL and *err on failure.
 */
extern const PfsCoreRowset *pfs_core_scan_next(PfsCoreScan *scan,
											   const volatile sig_atomic_t *interrupt,
											   PfsCoreError *err) PFS_CORE_NOEXCEPT;
/*
 * Starts the scan again.  When its rows fitted in one piece they are kept and
 * given again (every pass of a nested loop sees the same rows); otherwise the
 * table is read again.
 */
extern void pfs_core_scan_rewind(PfsCoreScan *scan) PFS_CORE_NOEXCEPT;
/*
 * A scan of a directory's regions skips a region it cannot read (damaged when
 * listed, or found damaged while read: the rows it gave stay given) rather
 * than failing; each such region leaves a warning, taken here one at a time
 * (false when none is left) after pfs_core_scan_begin and after each
 * pfs_core_scan_next.  A one-file server's scan fails instead.
 */
extern bool pfs_core_scan_warning(PfsCoreScan *scan, PfsCoreError *warning) PFS_CORE_NOEXCEPT;
extern void pfs_core_scan_end(PfsCoreScan *scan) PFS_CORE_NOEXCEPT;

/*
 * Whether the reader evaluates a condition on this column: bigint columns take
 * every op, text columns EQ, IN and PREFIX, every column IS [NOT] NULL.
 */
extern bool pfs_core_qual_supported(int table, int column, PfsCoreQualOp op) PFS_CORE_NOEXCEPT;

/* ---- Writes: setup changes made by a transaction (core_modify.cpp) ----
 *
 * UPDATE, INSERT, DELETE and TRUNCATE are recorded per backend as a log of
 * pending changes, each tagged with the subtransaction nesting level and the
 * command id that made it.  Nothing reaches the region before the top-level
 * transaction commits: pfs_core_write_commit then takes the setup lock of
 * every region involved, re-reads the current setup, checks that every change
 * still applies, and applies the changes in order through the agent's setup
 * functions, writing only the columns the transaction set (the last commit
 * wins per column).  Scans of the same transaction see its changes through an
 * overlay (pfs_core_overlay_*).
 *
 * Rows are passed as arrays of PfsCoreValue with one element per column of
 * the table (pfs_core_column_count), in catalogue order; columns the foreign
 * table does not have are NULL.  Text is UTF-8 and not NUL-terminated.
 */

/* What a table allows (pfs_core_table_operations). */
#define PFS_CORE_OP_UPDATE		1
#define PFS_CORE_OP_INSERT		2
#define PFS_CORE_OP_DELETE		4
#define PFS_CORE_OP_TRUNCATE	8

extern int	pfs_core_table_operations(int table) PFS_CORE_NOEXCEPT;
/*
 * Whether a transaction's pending changes can change the values of a table's
 * rows or add rows (UPDATE, INSERT, a TRUNCATE that resets counters), rather
 * than only hide rows: conditions pushed into its scans must then be checked
 * again after the overlay.
 */
extern bool pfs_core_overlay_changes_values(int table) PFS_CORE_NOEXCEPT;
/* A column UPDATE may set. */
extern bool pfs_core_column_updatable(int table, int column) PFS_CORE_NOEXCEPT;
/* A column of the key that identifies a row for UPDATE and DELETE. */
extern bool pfs_core_column_is_key(int table, int column) PFS_CORE_NOEXCEPT;

typedef struct PfsCoreValue
{
	const char *text;			/* text columns: UTF-8, len bytes */
	uint32_t	len;
	int64_t		value;			/* bigint columns */
	bool		isnull;
	bool		changed;		/* set by the core: it replaced the value */
} PfsCoreValue;

/*
 * A failed write: the message, detail and hint, and the SQLSTATE of the
 * error ("23505"); an empty sqlstate means error.kind says what failed (a
 * region that cannot be opened, out of memory, a bug).
 */
typedef struct PfsCoreWriteError
{
	PfsCoreError error;
	char		sqlstate[6];
} PfsCoreWriteError;

/*
 * Checks that the region at path can be written (mapped read-write), for
 * BeginForeignModify and TRUNCATE: a region the server cannot write is an
 * error now rather than at commit.
 */
extern bool pfs_core_write_check(const char *path, PfsCoreWriteError *err) PFS_CORE_NOEXCEPT;

/*
 * UPDATE of one row.  old_row: the row as scanned (its key identifies it);
 * new_row: the whole new row, whose values the core normalizes in place
 * (changed set: 'yes' becomes 'YES', ...); set[c]: column c is in the SET
 * list.  A value out of its domain, a column that may not change, or the
 * tracing rule of setup_instruments make it fail, and nothing is recorded.
 */
extern bool pfs_core_write_update(const char *path, int table, const PfsCoreValue *old_row,
								  PfsCoreValue *new_row, const bool *set,
								  int level, uint32_t cid,
								  PfsCoreWriteError *err) PFS_CORE_NOEXCEPT;
/*
 * INSERT of one row (setup_actors, setup_objects).  A column the INSERT names
 * (named[c], or none when named is NULL: COPY) must not be NULL, as in MySQL
 * and as in an UPDATE; a column it leaves out (NULL) takes MySQL's default.
 * The row is normalized in place.  A row whose key is already
 * visible to the transaction is a unique violation, or, with skip_duplicate
 * (ON CONFLICT DO NOTHING), sets *skipped and records nothing.
 */
extern bool pfs_core_write_insert(const char *path, int table, PfsCoreValue *row,
								  const bool *named, bool skip_duplicate, bool *skipped,
								  int level, uint32_t cid,
								  PfsCoreWriteError *err) PFS_CORE_NOEXCEPT;
/* DELETE of the row whose key old_row holds. */
extern bool pfs_core_write_delete(const char *path, int table, const PfsCoreValue *old_row,
								  int level, uint32_t cid,
								  PfsCoreWriteError *err) PFS_CORE_NOEXCEPT;
/* TRUNCATE of a table whose operations include PFS_CORE_OP_TRUNCATE. */
extern bool pfs_core_write_truncate(const char *path, int table, int level, uint32_t cid,
									PfsCoreWriteError *err) PFS_CORE_NOEXCEPT;

/* True while the transaction has changes not yet committed. */
extern bool pfs_core_write_pending(void) PFS_CORE_NOEXCEPT;
/*
 * Applies every pending change (top-level commit) and forgets them.  On
 * failure nothing was applied, *err says why and the changes stay pending
 * until pfs_core_write_discard.  interrupt, if not NULL, is polled while
 * waiting for a region's setup lock: when it becomes non-zero the commit
 * stops with PFS_CORE_INTERRUPTED and may be called again.  timeout_ms (0:
 * none) bounds each wait for a setup lock: PFS_CORE_LOCK_TIMEOUT.
 */
extern bool pfs_core_write_commit(const volatile sig_atomic_t *interrupt,
								  uint32_t timeout_ms,
								  PfsCoreWriteError *err) PFS_CORE_NOEXCEPT;
/* Forgets every pending change (abort, or after commit). */
extern void pfs_core_write_discard(void) PFS_CORE_NOEXCEPT;
/* Unmaps the regions mapped for writing (a server changed); pending changes stay. */
extern void pfs_core_write_forget_regions(void) PFS_CORE_NOEXCEPT;
/*
 * End of the subtransaction at nesting level `level`: its changes (and those
 * of its committed children) go to the parent on commit, away on abort.
 */
extern void pfs_core_write_subxact_end(int level, bool commit) PFS_CORE_NOEXCEPT;

/*
 * The overlay of one scan: the pending changes of commands before `cid` on
 * one table of the region at path, applied to the rows the scan produces.
 * NULL with err->error.kind == PFS_CORE_OK when there is nothing to apply.
 *
 * pfs_core_overlay_row: row holds a produced row (every column the foreign
 * table has; the others NULL).  Returns -1 when the row is gone (deleted,
 * truncated), 0 when it is unchanged, 1 when values were replaced (changed
 * set on them), -2 when out of memory.  pfs_core_overlay_extra fills row with
 * the next row the transaction inserted that the scan did not produce, false
 * at the end.  Text given back stays valid until pfs_core_overlay_free.
 */
typedef struct PfsCoreOverlay PfsCoreOverlay;

extern PfsCoreOverlay *pfs_core_overlay_begin(const char *path, int table, uint32_t cid,
											  PfsCoreWriteError *err) PFS_CORE_NOEXCEPT;
extern int	pfs_core_overlay_row(PfsCoreOverlay *overlay, PfsCoreValue *row) PFS_CORE_NOEXCEPT;
extern bool pfs_core_overlay_extra(PfsCoreOverlay *overlay, PfsCoreValue *row) PFS_CORE_NOEXCEPT;
/* ReScan: produce the extra rows again. */
extern void pfs_core_overlay_rewind(PfsCoreOverlay *overlay) PFS_CORE_NOEXCEPT;
extern void pfs_core_overlay_free(PfsCoreOverlay *overlay) PFS_CORE_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif							/* PFS_CORE_H */
