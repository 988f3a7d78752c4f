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
	PFS_CORE_INTERRUPTED,		/* the interrupt flag was raised mid-scan */
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
	PFS_CORE_TEXT = 1			/* text */
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
extern bool pfs_core_column_nullable(int table, int column) PFS_CORE_NOEXCEPT;
/* Index of the column with this exact name in the table, or -1. */
extern int	pfs_core_column_find(int table, const char *name) PFS_CORE_NOEXCEPT;

/* ---- Regions: mapped once per backend and server ---- */

typedef struct PfsCoreRegion PfsCoreRegion;

/*
 * The region of a server (key: its OID) at path.  Mapped on first use and
 * kept; mapped again when the path differs from the cached one or the file
 * changed (device, inode, size or modification time).  The pointer stays
 * valid until the next call of pfs_core_region_get or
 * pfs_core_region_forget_all: do not keep it across calls into PostgreSQL
 * code that may run invalidation callbacks.  NULL and *err on failure.
 */
extern PfsCoreRegion *pfs_core_region_get(uint32_t key, const char *path,
										  PfsCoreError *err) PFS_CORE_NOEXCEPT;
/* Unmaps every cached region (server options changed or a server dropped). */
extern void pfs_core_region_forget_all(void) PFS_CORE_NOEXCEPT;
/* Number of regions mapped now (for tests). */
extern int	pfs_core_region_cached(void) PFS_CORE_NOEXCEPT;
/* Upper bound of a table's row count, from the region's array sizes. */
extern double pfs_core_estimated_rows(const PfsCoreRegion *region, int table) PFS_CORE_NOEXCEPT;

/* ---- Scans: a consistent copy of a table's rows ---- */

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
} PfsCoreRowset;

/*
 * Copies the rows of a table out of the region.  wanted[c] says whether
 * column c is needed (NULL: every column); unwanted columns get no cell.
 * interrupt, if not NULL, is polled during the copy: when it becomes non-zero
 * the scan stops with PFS_CORE_INTERRUPTED.  Rows the reader had to skip
 * because an index inside them was invalid make the scan fail with
 * PFS_CORE_CORRUPTED (a region is never shown with rows silently missing).
 * NULL and *err on failure.
 */
extern PfsCoreRowset *pfs_core_scan(PfsCoreRegion *region, int table,
									const bool *wanted, size_t text_prefix,
									const volatile sig_atomic_t *interrupt,
									PfsCoreError *err) PFS_CORE_NOEXCEPT;
extern void pfs_core_rowset_free(PfsCoreRowset *rowset) PFS_CORE_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif							/* PFS_CORE_H */
