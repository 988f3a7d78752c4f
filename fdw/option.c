/*-------------------------------------------------------------------------
 *
 * option.c
 *	  Option validation and lookup for perfschema_fdw.
 *
 * Servers have one of two options: "region", the path of the region file an
 * instrumented process writes, or "region_directory", a directory whose
 * region files (one per process) are read as one, and "follow_symlinks"
 * (boolean, default false): whether a region path that is a symbolic link is
 * followed, and whether a directory's symbolic links and hard links are read
 * (else they are skipped with a warning).  Foreign tables have one option,
 * "table": the performance_schema table they show.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/reloptions.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_foreign_server.h"
#include "catalog/pg_foreign_table.h"
#include "commands/defrem.h"
#include "foreign/foreign.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "shim.h"

typedef struct PfsOption
{
	const char *optname;
	Oid			optcontext;		/* catalog the option may appear in */
} PfsOption;

static const PfsOption valid_options[] = {
	{"region", ForeignServerRelationId},
	{"region_directory", ForeignServerRelationId},
	{"follow_symlinks", ForeignServerRelationId},
	{"table", ForeignTableRelationId},
	{NULL, InvalidOid}
};

PG_FUNCTION_INFO_V1(perfschema_fdw_validator);

static bool
is_valid_option(const char *name, Oid context)
{
	const PfsOption *opt;

	for (opt = valid_options; opt->optname; opt++)
	{
		if (context == opt->optcontext && strcmp(opt->optname, name) == 0)
			return true;
	}
	return false;
}

static void
report_invalid_option(const char *name, Oid context)
{
	const PfsOption *opt;
	StringInfoData buf;

	initStringInfo(&buf);
	for (opt = valid_options; opt->optname; opt++)
	{
		if (context == opt->optcontext)
			appendStringInfo(&buf, "%s%s", buf.len > 0 ? ", " : "", opt->optname);
	}
	ereport(ERROR,
			(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
			 errmsg("invalid option \"%s\"", name),
			 buf.len > 0
			 ? errhint("Valid options in this context are: %s.", buf.data)
			 : errhint("There are no valid options in this context.")));
}

static void
reject_duplicate(const char *seen)
{
	if (seen != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("conflicting or redundant options")));
}

/*
 * A region path is a file the server process will map, a region directory
 * holds such files: only roles that may read server files choose them (as
 * file_fdw's "filename").
 */
static void
check_region(const char *option, const char *region, bool directory)
{
	PfsCoreError err;

	if (!has_privs_of_role(GetUserId(), ROLE_PG_READ_SERVER_FILES))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to set option \"%s\"", option),
				 errdetail("Only superusers and roles with privileges of the \"pg_read_server_files\" role may set the %s of a perfschema_fdw server.",
						   directory ? "region directory" : "region")));
	if (!is_absolute_path(region))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s path \"%s\" is not absolute",
						directory ? "region directory" : "region", region),
				 directory
				 ? errhint("Give the full path of the directory of the instrumented programs' PFS_REGION files.")
				 : errhint("Give the full path of the file the instrumented program was started with in PFS_REGION.")));
	/* a FIFO or a directory now is a mistake; a missing file may come later */
	if (!(directory ? pfs_core_check_region_directory(region, &err)
		  : pfs_core_check_region_path(region, &err)))
		pfs_report_core_error(&err);
}

static void
check_table(const char *table)
{
	StringInfoData buf;
	int			i;

	if (pfs_core_table_find(table) >= 0)
		return;
	initStringInfo(&buf);
	for (i = 0; i < pfs_core_table_count(); i++)
		appendStringInfo(&buf, "%s%s", i > 0 ? ", " : "", pfs_core_table_name(i));
	ereport(ERROR,
			(errcode(ERRCODE_FDW_TABLE_NOT_FOUND),
			 errmsg("performance_schema table \"%s\" does not exist", table),
			 errhint("Valid tables are: %s.", buf.data)));
}

/*
 * perfschema_fdw_validator
 *		Validate the options of a perfschema_fdw object.
 */
Datum
perfschema_fdw_validator(PG_FUNCTION_ARGS)
{
	List	   *options = untransformRelOptions(PG_GETARG_DATUM(0));
	Oid			catalog = PG_GETARG_OID(1);
	char	   *region = NULL;
	char	   *directory = NULL;
	char	   *table = NULL;
	DefElem    *follow = NULL;
	ListCell   *cell;

	foreach(cell, options)
	{
		DefElem    *def = lfirst_node(DefElem, cell);

		if (!is_valid_option(def->defname, catalog))
			report_invalid_option(def->defname, catalog);

		if (strcmp(def->defname, "region") == 0)
		{
			reject_duplicate(region);
			region = defGetString(def);
			check_region("region", region, false);
		}
		else if (strcmp(def->defname, "region_directory") == 0)
		{
			reject_duplicate(directory);
			directory = defGetString(def);
			check_region("region_directory", directory, true);
		}
		else if (strcmp(def->defname, "follow_symlinks") == 0)
		{
			reject_duplicate((const char *) follow);
			follow = def;
			/* like file_fdw's boolean options: true/false/on/off, else an error */
			(void) defGetBoolean(def);
		}
		else if (strcmp(def->defname, "table") == 0)
		{
			reject_duplicate(table);
			table = defGetString(def);
			check_table(table);
		}
	}

	if (catalog == ForeignServerRelationId && region != NULL && directory != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("options \"region\" and \"region_directory\" cannot both be set"),
				 errhint("A server reads one region file or one directory of them; create a server for each.")));
	if (catalog == ForeignServerRelationId && region == NULL && directory == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_DYNAMIC_PARAMETER_VALUE_NEEDED),
				 errmsg("option \"region\" or \"region_directory\" is required for perfschema_fdw servers"),
				 errhint("Set region to the path of the region file, for example OPTIONS (region '/tmp/app.pfs'), or region_directory to a directory of them.")));
	if (catalog == ForeignTableRelationId && table == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_DYNAMIC_PARAMETER_VALUE_NEEDED),
				 errmsg("option \"table\" is required for perfschema_fdw foreign tables"),
				 errhint("Use IMPORT FOREIGN SCHEMA performance_schema to create the foreign tables.")));

	PG_RETURN_VOID();
}

/*
 * pfs_get_table_options
 *		Fetch the region path (or directory) and table of a foreign table.
 */
void
pfs_get_table_options(Oid foreigntableid, PfsTableOptions *opts)
{
	ForeignTable *table = GetForeignTable(foreigntableid);
	ForeignServer *server = GetForeignServer(table->serverid);
	ListCell   *lc;

	memset(opts, 0, sizeof(*opts));
	opts->serverid = server->serverid;
	opts->follow_symlinks = false;
	opts->table = -1;
	foreach(lc, server->options)
	{
		DefElem    *def = lfirst_node(DefElem, lc);

		if (strcmp(def->defname, "region") == 0)
			opts->region = defGetString(def);
		else if (strcmp(def->defname, "region_directory") == 0)
		{
			opts->region = defGetString(def);
			opts->directory = true;
		}
		else if (strcmp(def->defname, "follow_symlinks") == 0)
			opts->follow_symlinks = defGetBoolean(def);
	}
	foreach(lc, table->options)
	{
		DefElem    *def = lfirst_node(DefElem, lc);

		if (strcmp(def->defname, "table") == 0)
			opts->table_name = defGetString(def);
	}

	/* The validator requires both; a table may be gone from a newer build. */
	if (opts->region == NULL || opts->table_name == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
				 errmsg("foreign table \"%s\" lacks the \"region\", \"region_directory\" or \"table\" option",
						get_rel_name(foreigntableid))));
	/* before anything opens the region: the core looks it up by path */
	pfs_core_set_follow_symlinks(opts->region, opts->follow_symlinks);
	opts->table = pfs_core_table_find(opts->table_name);
	if (opts->table < 0)
		check_table(opts->table_name);
}

/*
 * pfs_get_relation_options
 *		The options of an opened foreign table; returns its table's index in
 *		the core's catalogue.
 */
int
pfs_get_relation_options(Relation rel, PfsTableOptions *opts)
{
	pfs_get_table_options(RelationGetRelid(rel), opts);
	return opts->table;
}
