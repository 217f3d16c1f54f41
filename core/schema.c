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
	{
	    .version = 2,
	    .name = "objects and event log",
	    .sql = "CREATE TABLE objects (\n"
	           "    kind TEXT NOT NULL,\n"
	           "    tenant TEXT NOT NULL,\n"
	           "    name TEXT NOT NULL,\n"
	           "    uid TEXT NOT NULL UNIQUE,\n"
	           "    rv INTEGER NOT NULL,\n"
	           "    doc TEXT NOT NULL,\n"
	           "    PRIMARY KEY (kind, tenant, name)\n"
	           ") STRICT, WITHOUT ROWID;\n"
	           "CREATE INDEX objects_by_tenant ON objects (tenant, kind);\n"
	           "CREATE TABLE events (\n"
	           "    rv INTEGER PRIMARY KEY,\n"
	           "    type TEXT NOT NULL,\n"
	           "    kind TEXT NOT NULL,\n"
	           "    tenant TEXT NOT NULL,\n"
	           "    name TEXT NOT NULL,\n"
	           "    spec_changed INTEGER NOT NULL,\n"
	           "    doc TEXT NOT NULL\n"
	           ") STRICT;\n"
	           "CREATE TABLE revision (\n"
	           "    id INTEGER PRIMARY KEY CHECK (id = 1),\n"
	           "    rv INTEGER NOT NULL\n"
	           ") STRICT;\n"
	           "INSERT INTO revision (id, rv) VALUES (1, 0);\n",
	},
};

const rz_migration_t *rz_db_migrations(size_t *count)
{
	if (count != NULL) {
		*count = sizeof(migrations) / sizeof(migrations[0]);
	}
	return migrations;
}
