/*-------------------------------------------------------------------------
 *
 * report.c
 *	  Error reporting: turns an error returned by the perfschema_fdw core (a
 *	  read's, a write's, a skipped region's warning) into an ereport.
 *
 * The core fills a PfsCoreError (plain data) and returns; only then does the
 * shim raise the error, from a frame that owns no C++ object.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "shim.h"

static int
sqlstate_of(PfsCoreErrorKind kind)
{
	switch (kind)
	{
		case PFS_CORE_FILE_NOT_FOUND:
			return ERRCODE_UNDEFINED_FILE;
		case PFS_CORE_PERMISSION:
			return ERRCODE_INSUFFICIENT_PRIVILEGE;
		case PFS_CORE_CORRUPTED:
			return ERRCODE_DATA_CORRUPTED;
		case PFS_CORE_BAD_VERSION:
			return ERRCODE_FEATURE_NOT_SUPPORTED;
		case PFS_CORE_OUT_OF_MEMORY:
			return ERRCODE_FDW_OUT_OF_MEMORY;
		case PFS_CORE_INTERRUPTED:
			return ERRCODE_QUERY_CANCELED;
		case PFS_CORE_CHANGED:
			/* a concurrent change spoiled the read: running it again may work */
			return ERRCODE_T_R_SERIALIZATION_FAILURE;
		case PFS_CORE_WRONG_TYPE:
			return ERRCODE_WRONG_OBJECT_TYPE;
		case PFS_CORE_LOCK_TIMEOUT:
			return ERRCODE_LOCK_NOT_AVAILABLE;
		case PFS_CORE_IO:
			return ERRCODE_FDW_ERROR;
		case PFS_CORE_OK:
		case PFS_CORE_INTERNAL:
			break;
	}
	return ERRCODE_INTERNAL_ERROR;
}

/*
 * pfs_report_core_error
 *		Raise the error the core reported, with its detail and hint.
 */
void
pfs_report_core_error(const PfsCoreError *err)
{
	ereport(ERROR,
			(errcode(sqlstate_of(err->kind)),
			 errmsg_internal("%s", err->message),
			 err->detail[0] ? errdetail_internal("%s", err->detail) : 0,
			 err->hint[0] ? errhint("%s", err->hint) : 0));
	pg_unreachable();
}

/*
 * pfs_report_write_error
 *		Raise a write error of the core, with its SQLSTATE (or, without one,
 *		as pfs_report_core_error).
 */
void
pfs_report_write_error(const PfsCoreWriteError *err)
{
	const char *s = err->sqlstate;

	if (s[0] == '\0')
		pfs_report_core_error(&err->error);
	ereport(ERROR,
			(errcode(MAKE_SQLSTATE(s[0], s[1], s[2], s[3], s[4])),
			 errmsg_internal("%s", err->error.message),
			 err->error.detail[0] ? errdetail_internal("%s", err->error.detail) : 0,
			 err->error.hint[0] ? errhint("%s", err->error.hint) : 0));
	pg_unreachable();
}

/*
 * pfs_report_scan_warnings
 *		A WARNING for each region the scan skipped: a damaged file in a
 *		region directory hides none of the others.
 */
void
pfs_report_scan_warnings(PfsCoreScan *scan)
{
	PfsCoreError warning;

	while (pfs_core_scan_warning(scan, &warning))
		ereport(WARNING,
				(errcode(sqlstate_of(warning.kind)),
				 errmsg_internal("%s", warning.message),
				 warning.detail[0] ? errdetail_internal("%s", warning.detail) : 0,
				 errhint("%s", warning.hint[0] ? warning.hint : "Remove the file from the region directory if it is not a region.")));
}
