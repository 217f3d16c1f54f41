/*
 * core/store/schema.c - the product's schema, as numbered migrations (see core/store/db.h).
 *
 * Append only: a released migration is never edited or removed, because databases in the
 * field have already recorded it. A change is a new step with the next version number.
 */
#include <config.h>

#include <stddef.h>

#include "core/store/db.h"

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
	{
	    .version = 3,
	    .name = "credentials, token secrets, revoked sessions, audit log",
	    .sql = "CREATE TABLE credentials (\n"
	           "    kind TEXT NOT NULL DEFAULT 'User' CHECK (kind = 'User'),\n"
	           "    owner TEXT NOT NULL DEFAULT '' CHECK (owner = ''),\n"
	           "    user TEXT PRIMARY KEY,\n"
	           "    hash TEXT NOT NULL,\n"
	           "    FOREIGN KEY (kind, owner, user) REFERENCES objects (kind, tenant, name)\n"
	           "        ON DELETE CASCADE\n"
	           ") STRICT;\n"
	           "CREATE TABLE token_secrets (\n"
	           "    kind TEXT NOT NULL DEFAULT 'APIToken' CHECK (kind = 'APIToken'),\n"
	           "    user TEXT NOT NULL,\n"
	           "    id TEXT NOT NULL,\n"
	           "    hash TEXT NOT NULL UNIQUE,\n"
	           "    PRIMARY KEY (user, id),\n"
	           "    FOREIGN KEY (kind, user, id) REFERENCES objects (kind, tenant, name)\n"
	           "        ON DELETE CASCADE\n"
	           ") STRICT;\n"
	           "CREATE TABLE revoked_sessions (\n"
	           "    jti TEXT PRIMARY KEY,\n"
	           "    exp INTEGER NOT NULL\n"
	           ") STRICT;\n"
	           "CREATE TABLE audit (\n"
	           "    id INTEGER PRIMARY KEY,\n"
	           "    time TEXT NOT NULL,\n"
	           "    user TEXT NOT NULL,\n"
	           "    role TEXT NOT NULL,\n"
	           "    source_ip TEXT NOT NULL,\n"
	           "    request_id TEXT NOT NULL,\n"
	           "    method TEXT NOT NULL,\n"
	           "    path TEXT NOT NULL,\n"
	           "    verb TEXT NOT NULL,\n"
	           "    kind TEXT NOT NULL,\n"
	           "    tenant TEXT NOT NULL,\n"
	           "    name TEXT NOT NULL,\n"
	           "    code INTEGER NOT NULL,\n"
	           "    error TEXT NOT NULL\n"
	           ") STRICT;\n"
	           "CREATE INDEX audit_by_time ON audit (time);\n",
	},
	{
	    .version = 4,
	    .name = "TF state versions and locks",
	    .sql = "CREATE TABLE tfstate_versions (\n"
	           "    kind TEXT NOT NULL DEFAULT 'Tenant' CHECK (kind = 'Tenant'),\n"
	           "    owner TEXT NOT NULL DEFAULT '' CHECK (owner = ''),\n"
	           "    tenant TEXT NOT NULL,\n"
	           "    version INTEGER NOT NULL,\n"
	           "    serial INTEGER,\n"
	           "    lineage TEXT,\n"
	           "    md5 TEXT NOT NULL,\n"
	           "    time TEXT NOT NULL,\n"
	           "    run TEXT NOT NULL,\n"
	           "    size INTEGER NOT NULL,\n"
	           "    blob BLOB NOT NULL,\n"
	           "    PRIMARY KEY (tenant, version),\n"
	           "    FOREIGN KEY (kind, owner, tenant) REFERENCES objects (kind, tenant, name)\n"
	           "        ON DELETE CASCADE\n"
	           ") STRICT;\n"
	           "CREATE TABLE tfstate_locks (\n"
	           "    kind TEXT NOT NULL DEFAULT 'Tenant' CHECK (kind = 'Tenant'),\n"
	           "    owner TEXT NOT NULL DEFAULT '' CHECK (owner = ''),\n"
	           "    tenant TEXT PRIMARY KEY,\n"
	           "    id TEXT NOT NULL,\n"
	           "    info TEXT NOT NULL,\n"
	           "    FOREIGN KEY (kind, owner, tenant) REFERENCES objects (kind, tenant, name)\n"
	           "        ON DELETE CASCADE\n"
	           ") STRICT;\n",
	},
	{
	    .version = 5,
	    .name = "who holds a TF state lock",
	    .sql = "ALTER TABLE tfstate_locks ADD COLUMN holder TEXT NOT NULL DEFAULT '';\n",
	},
	{
	    .version = 6,
	    .name = "sensitive outputs of a tenant's state, for the credentials endpoints",
	    .sql = "CREATE TABLE tenant_outputs (\n"
	           "    kind TEXT NOT NULL DEFAULT 'Tenant' CHECK (kind = 'Tenant'),\n"
	           "    owner TEXT NOT NULL DEFAULT '' CHECK (owner = ''),\n"
	           "    tenant TEXT NOT NULL,\n"
	           "    name TEXT NOT NULL,\n"
	           "    time TEXT NOT NULL,\n"
	           "    run TEXT NOT NULL,\n"
	           "    blob BLOB NOT NULL,\n"
	           "    PRIMARY KEY (tenant, name),\n"
	           "    FOREIGN KEY (kind, owner, tenant) REFERENCES objects (kind, tenant, name)\n"
	           "        ON DELETE CASCADE\n"
	           ") STRICT;\n",
	},
	{
	    .version = 7,
	    .name = "the labels a change replaced, for watches with a label selector",
	    .sql = "ALTER TABLE events ADD COLUMN prev_labels TEXT;\n",
	},
	{
	    .version = 8,
	    .name = "how many resource instances a TF state version holds (NULL: unknown)",
	    .sql = "ALTER TABLE tfstate_versions ADD COLUMN resources INTEGER;\n",
	},
	{
	    .version = 9,
	    .name = "what an audited request said besides its path (an approval's reason)",
	    .sql = "ALTER TABLE audit ADD COLUMN detail TEXT NOT NULL DEFAULT '';\n",
	},
	{
	    .version = 10,
	    .name = "sessions, bound to the user they were issued to",
	    .sql = "CREATE TABLE sessions (\n"
	           "    kind TEXT NOT NULL DEFAULT 'User' CHECK (kind = 'User'),\n"
	           "    owner TEXT NOT NULL DEFAULT '' CHECK (owner = ''),\n"
	           "    user TEXT NOT NULL,\n"
	           "    uid TEXT NOT NULL,\n"
	           "    jti TEXT PRIMARY KEY,\n"
	           "    exp INTEGER NOT NULL,\n"
	           "    FOREIGN KEY (kind, owner, user) REFERENCES objects (kind, tenant, name)\n"
	           "        ON DELETE CASCADE\n"
	           ") STRICT;\n"
	           "CREATE INDEX sessions_by_user ON sessions (user);\n",
	},
	{
	    .version = 11,
	    .name = "metadata.namespace beside metadata.tenant, as Kubernetes clients read it",
	    .sql = "UPDATE objects SET doc = json_set(doc, '$.metadata.namespace',\n"
	           "    json_extract(doc, '$.metadata.tenant'))\n"
	           "  WHERE json_type(doc, '$.metadata.tenant') = 'text';\n"
	           "UPDATE events SET doc = json_set(doc, '$.metadata.namespace',\n"
	           "    json_extract(doc, '$.metadata.tenant'))\n"
	           "  WHERE json_type(doc, '$.metadata.tenant') = 'text';\n",
	},
	{
	    /* WITHOUT ROWID keeps whole rows in the key's b-tree, interior pages too: with
	     * documents of 0.4-256 KiB (SQLite advises against it past 1/20 of a page), every
	     * read and write of any object went through big cells. A rowid table keeps the
	     * same key as its unique index; the foreign keys name the same columns. */
	    .version = 12,
	    .name = "objects as a rowid table, the key an index",
	    .without_foreign_keys = true,
	    .sql = "CREATE TABLE objects_new (\n"
	           "    kind TEXT NOT NULL,\n"
	           "    tenant TEXT NOT NULL,\n"
	           "    name TEXT NOT NULL,\n"
	           "    uid TEXT NOT NULL UNIQUE,\n"
	           "    rv INTEGER NOT NULL,\n"
	           "    doc TEXT NOT NULL,\n"
	           "    PRIMARY KEY (kind, tenant, name)\n"
	           ") STRICT;\n"
	           "INSERT INTO objects_new (kind, tenant, name, uid, rv, doc)\n"
	           "    SELECT kind, tenant, name, uid, rv, doc FROM objects\n"
	           "    ORDER BY kind, tenant, name;\n"
	           "DROP TABLE objects;\n"
	           "ALTER TABLE objects_new RENAME TO objects;\n"
	           "CREATE INDEX objects_by_tenant ON objects (tenant, kind);\n",
	},
	{
	    /* a remote run's secret lives on its runner: a restarted daemon takes the run up
	     * again and must still accept the runner's state writes. The hash only. */
	    .version = 13,
	    .name = "the grants of runs on remote runners, kept across a restart",
	    .sql = "CREATE TABLE run_grants (\n"
	           "    run TEXT NOT NULL,\n"
	           "    tenant TEXT NOT NULL,\n"
	           "    hash TEXT NOT NULL,\n"
	           "    PRIMARY KEY (run, hash)\n"
	           ") STRICT;\n",
	},
};

const rz_migration_t *rz_db_migrations(size_t *count)
{
	if (count != NULL) {
		*count = sizeof(migrations) / sizeof(migrations[0]);
	}
	return migrations;
}
