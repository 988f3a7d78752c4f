/*-------------------------------------------------------------------------
 *
 * relation_cache.c
 *	  A foreign table's options and column map, kept per backend between
 *	  scans.
 *
 * A scan's start needs the foreign table's and its server's options (two
 * catalogue lookups and their option lists) and the map of its columns to the
 * region table's (each attribute found by name): a few microseconds that a
 * small monitoring query, executed again and again from a prepared plan,
 * would otherwise pay each time.  Entries are made on first use and all are
 * dropped when the catalogue says a foreign table, a server or a relation
 * changed (syscache and relcache callbacks, as postgres_fdw forgets its
 * connections): the next use reads the catalogue again.  Callers copy what
 * they keep, so dropping the entries can wait for the next lookup.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "shim.h"

typedef struct PfsRelationEntry
{
	Oid			relid;			/* hash key */
	PfsRelationInfo info;
} PfsRelationEntry;

static MemoryContext cache_cxt = NULL;
static HTAB *entries = NULL;
static bool stale = false;		/* a callback fired: drop every entry */

static void
catalogue_changed(Datum arg, int cacheid, uint32 hashvalue)
{
	stale = true;
}

static void
relation_changed(Datum arg, Oid relid)
{
	/* any relation's statistics change it: only ours matter (InvalidOid: all) */
	if (entries != NULL && (!OidIsValid(relid) || hash_search(entries, &relid, HASH_FIND, NULL) != NULL))
		stale = true;
}

static void
make_table(void)
{
	HASHCTL		ctl;

	if (cache_cxt == NULL)
	{
		cache_cxt = AllocSetContextCreate(CacheMemoryContext, "perfschema_fdw relations",
										  ALLOCSET_SMALL_SIZES);
		CacheRegisterSyscacheCallback(FOREIGNTABLEREL, catalogue_changed, (Datum) 0);
		CacheRegisterSyscacheCallback(FOREIGNSERVEROID, catalogue_changed, (Datum) 0);
		CacheRegisterRelcacheCallback(relation_changed, (Datum) 0);
	}
	else
		MemoryContextReset(cache_cxt);
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(Oid);
	ctl.entrysize = sizeof(PfsRelationEntry);
	ctl.hcxt = cache_cxt;
	entries = hash_create("perfschema_fdw relations", 16, &ctl,
						  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	stale = false;
}

/*
 * pfs_relation_info
 *		The options and column map of an opened foreign table (errors as
 *		pfs_get_table_options and pfs_map_columns report them; nothing is kept
 *		then).  Valid until the next call: copy what is kept.  The strings and
 *		the map are in the cache or the current memory context.
 */
const PfsRelationInfo *
pfs_relation_info(Relation rel)
{
	Oid			relid = RelationGetRelid(rel);
	PfsRelationEntry *entry;
	PfsTableOptions opts;
	MemoryContext old;
	int		   *core_attr;
	int			ncolumns;
	bool		found;

	if (entries == NULL || stale)
		make_table();
	entry = hash_search(entries, &relid, HASH_FIND, NULL);
	if (entry != NULL)
	{
		/* the core's setting by path: another server of the path may have set it since */
		pfs_core_set_follow_symlinks(entry->info.opts.region, entry->info.opts.follow_symlinks);
		return &entry->info;
	}

	/* read and checked outside the cache: an error leaves no entry */
	pfs_get_table_options(relid, &opts);
	ncolumns = pfs_core_column_count(opts.table);
	core_attr = palloc(sizeof(int) * Max(ncolumns, 1));
	pfs_map_columns(rel, &opts, core_attr);
	if (stale)
	{
		/* the lookups took an invalidation: what they read may be old, keep nothing */
		static PfsRelationInfo uncached;

		uncached.opts = opts;
		uncached.ncolumns = ncolumns;
		uncached.core_attr = core_attr;
		return &uncached;
	}

	old = MemoryContextSwitchTo(cache_cxt);
	entry = hash_search(entries, &relid, HASH_ENTER, &found);
	entry->info.opts = opts;
	entry->info.opts.region = pstrdup(opts.region);
	entry->info.opts.table_name = pstrdup(opts.table_name);
	entry->info.ncolumns = ncolumns;
	entry->info.core_attr = palloc(sizeof(int) * Max(ncolumns, 1));
	memcpy(entry->info.core_attr, core_attr, sizeof(int) * Max(ncolumns, 1));
	MemoryContextSwitchTo(old);
	pfree(core_attr);
	return &entry->info;
}
