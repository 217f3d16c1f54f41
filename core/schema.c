/*
 * core/schema.c - the product's schema, as numbered migrations (see core/db.h).
 *
 * Append only: a released migration is never edited or removed, because databases in the
 * field have already recorded it. A change is a new step with the next version number.
 */
#include <config.h>

#include <stddef.h>

#include "core/db.h"

static const rz_migration_t migrations[] = {
	{
	    .version = 1,
	    .name = "meta table",
	    .sql = "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;\n"
	           "INSERT INTO meta (key, value)\n"
	           "    VALUES ('created_at', strftime('%Y-%m-%dT%H:%M:%SZ', 'now'));\n",
	},
};

const rz_migration_t *rz_db_migrations(size_t *count)
{
	if (count != NULL) {
		*count = sizeof(migrations) / sizeof(migrations[0]);
	}
	return migrations;
}
