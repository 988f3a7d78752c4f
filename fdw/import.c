/*-------------------------------------------------------------------------
 *
 * import.c
 *	  IMPORT FOREIGN SCHEMA performance_schema for perfschema_fdw.
 *
 * The CREATE FOREIGN TABLE statements are generated from the core's table
 * catalogue (the reader's table definitions), so a table added to the reader
 * is imported without any change here.  Column names are the reader's; int64
 * columns become bigint, text columns text, and a column the reader never
 * leaves NULL is declared NOT NULL.  A server that reads a directory of
 * regions gets the columns that say which process wrote each row
 * (process_id, program, and region_file in status) after the others.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "foreign/fdwapi.h"
#include "foreign/foreign.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"

#include "shim.h"

#define PFS_REMOTE_SCHEMA "performance_schema"

static char *
create_table_statement(int table, const char *servername, bool directory)
{
	StringInfoData buf;
	int			ncolumns = pfs_core_column_count(table);
	int			c;

	/* process_id, program (, region_file): where each row comes from */
	if (!directory)
		ncolumns -= pfs_core_extra_column_count(table);

	initStringInfo(&buf);
	appendStringInfo(&buf, "CREATE FOREIGN TABLE %s (",
					 quote_identifier(pfs_core_table_name(table)));
	for (c = 0; c < ncolumns; c++)
	{
		appendStringInfo(&buf, "%s\n  %s %s%s",
						 c > 0 ? "," : "",
						 quote_identifier(pfs_core_column_name(table, c)),
						 pfs_column_type_name(pfs_core_column_type(table, c)),
						 pfs_core_column_nullable(table, c) ? "" : " NOT NULL");
	}
	appendStringInfo(&buf, "\n) SERVER %s OPTIONS (table %s)",
					 quote_identifier(servername),
					 quote_literal_cstr(pfs_core_table_name(table)));
	return buf.data;
}

/*
 * pfsImportForeignSchema
 *		Create a foreign table for every performance_schema table (core
 *		applies LIMIT TO and EXCEPT again, and puts them in the local schema).
 */
List *
pfsImportForeignSchema(ImportForeignSchemaStmt *stmt, Oid serverOid)
{
	ForeignServer *server = GetForeignServer(serverOid);
	List	   *commands = NIL;
	ListCell   *lc;
	bool		directory = false;
	int			t;

	foreach(lc, server->options)
	{
		if (strcmp(lfirst_node(DefElem, lc)->defname, "region_directory") == 0)
			directory = true;
	}

	foreach(lc, stmt->options)
	{
		DefElem    *def = lfirst_node(DefElem, lc);

		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
				 errmsg("invalid option \"%s\"", def->defname),
				 errhint("IMPORT FOREIGN SCHEMA of perfschema_fdw takes no options.")));
	}

	if (strcmp(stmt->remote_schema, PFS_REMOTE_SCHEMA) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_SCHEMA_NOT_FOUND),
				 errmsg("schema \"%s\" is not present on foreign server \"%s\"",
						stmt->remote_schema, server->servername),
				 errhint("The only schema of a perfschema_fdw server is \"%s\".",
						 PFS_REMOTE_SCHEMA)));

	for (t = 0; t < pfs_core_table_count(); t++)
	{
		if (!IsImportableForeignTable(pfs_core_table_name(t), stmt))
			continue;
		commands = lappend(commands, create_table_statement(t, server->servername, directory));
	}
	return commands;
}
