/* core/model/columns.c - the columns of each kind's table (rezusctl get, as=Table). */
#include <config.h>

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/model/columns.h"

/* The value at a dotted path ("status.phase"), or NULL. */
static json_t *at(const json_t *v, const char *path)
{
	char buf[256], *save = NULL;
	const json_t *x = v;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = strtok_r(buf, ".", &save); p != NULL && x != NULL;
	     p = strtok_r(NULL, ".", &save)) {
		x = json_object_get(x, p);
	}
	return (json_t *)x;
}

static const char *str_at(const json_t *v, const char *path)
{
	return json_string_value(at(v, path));
}

/* A scalar as text ("" for none). */
static const char *scalar(const json_t *v, char *buf, size_t size)
{
	if (json_is_string(v)) {
		return json_string_value(v);
	}
	if (json_is_integer(v)) {
		snprintf(buf, size, "%lld", (long long)json_integer_value(v));
		return buf;
	}
	if (json_is_boolean(v)) {
		return json_is_true(v) ? "true" : "false";
	}
	return "";
}

const char *rz_columns_age(const char *t, time_t now, char *buf, size_t size)
{
	struct tm tm;
	time_t then;
	long d;

	memset(&tm, 0, sizeof(tm));
	if (t == NULL || strptime(t, "%Y-%m-%dT%H:%M:%S", &tm) == NULL) {
		snprintf(buf, size, "<unknown>");
		return buf;
	}
	then = timegm(&tm);
	d = (long)difftime(now, then);
	if (d < 0) {
		d = 0;
	}
	if (d < 120) {
		snprintf(buf, size, "%lds", d);
	} else if (d < 3600 * 3) {
		snprintf(buf, size, "%ldm", d / 60);
	} else if (d < 86400 * 2) {
		snprintf(buf, size, "%ldh", d / 3600);
	} else {
		snprintf(buf, size, "%ldd", d / 86400);
	}
	return buf;
}

/* ------------------------------------------------------------------ the tables */

static const struct table {
	const char *kind;
	rz_column_t cols[RZ_COLUMNS_MAX + 1];
} tables[] = {
	{ "Tenant",
	  { { "NAME", "metadata.name", false },
	    { "PROVIDER", "spec.clusterProvider", false },
	    { "PHASE", "status.phase", false },
	    { "MACHINES", "=machines", false },
	    { "KUBERNETES", "spec.kubernetesVersion", false },
	    { "AGE", "=age", false },
	    { "TALOS", "spec.talosVersion", true },
	    { "ENDPOINT", "spec.controlPlaneEndpoint", true },
	    { "LAST RUN", "=lastrun", true } } },
	{ "NodeGroup",
	  { { "NAME", "metadata.name", false },
	    { "TENANT", "metadata.tenant", false },
	    { "ROLE", "spec.role", false },
	    { "CLASS", "spec.providerClass", false },
	    { "DESIRED", "spec.count", false },
	    { "READY", "status.ready", false },
	    { "AGE", "=age", false },
	    { "TOTAL", "status.total", true } } },
	{ "Machine",
	  { { "NAME", "metadata.name", false },
	    { "TENANT", "metadata.tenant", false },
	    { "NODEGROUP", "spec.nodeGroup", false },
	    { "ROLE", "spec.role", false },
	    { "ADDRESS", "spec.address", false },
	    { "READY", "status.ready", false },
	    { "AGE", "=age", false },
	    { "STAGE", "status.stage", true },
	    { "PROVIDER ID", "spec.providerId", true },
	    { "SHAPE", "spec.shape", true } } },
	{ "ConfigPatch",
	  { { "NAME", "metadata.name", false },
	    { "TENANT", "metadata.tenant", false },
	    { "TARGET", "spec.targetRole", false },
	    { "FORMAT", "spec.format", false },
	    { "ENABLED", "spec.enabled", false },
	    { "AGE", "=age", false } } },
	{ "Run",
	  { { "NAME", "metadata.name", false },
	    { "TENANT", "metadata.tenant", false },
	    { "OPERATION", "spec.operation", false },
	    { "TRIGGER", "spec.trigger", false },
	    { "PHASE", "status.phase", false },
	    { "CHANGES", "=changes", false },
	    { "RUNNER", "=runner", false },
	    { "AGE", "=age", false },
	    { "MESSAGE", "status.message", true } } },
	{ "UpgradeRun",
	  { { "NAME", "metadata.name", false },
	    { "TENANT", "metadata.tenant", false },
	    { "COMPONENT", "spec.component", false },
	    { "TARGET", "spec.targetVersion", false },
	    { "DRY RUN", "spec.dryRun", false },
	    { "PHASE", "status.phase", false },
	    { "AGE", "=age", false } } },
	{ "EtcdBackup",
	  { { "NAME", "metadata.name", false },
	    { "TENANT", "metadata.tenant", false },
	    { "PHASE", "status.phase", false },
	    { "SIZE", "status.size", false },
	    { "TALOS", "status.talosVersion", false },
	    { "KUBERNETES", "status.kubernetesVersion", false },
	    { "AGE", "=age", false },
	    { "TRIGGER", "spec.trigger", true },
	    { "TARGET", "status.target", true },
	    { "MESSAGE", "status.message", true } } },
	{ "EtcdRestore",
	  { { "NAME", "metadata.name", false },
	    { "TENANT", "metadata.tenant", false },
	    { "BACKUP", "spec.backup", false },
	    { "DRY RUN", "spec.dryRun", false },
	    { "PHASE", "status.phase", false },
	    { "AGE", "=age", false },
	    { "MESSAGE", "status.message", true } } },
	{ "Event", /* kubectl's columns; the tenant first, as kubectl puts the namespace */
	  { { "TENANT", "metadata.tenant", false },
	    { "LAST SEEN", "=lastseen", false },
	    { "TYPE", "type", false },
	    { "REASON", "reason", false },
	    { "OBJECT", "=object", false },
	    { "COUNT", "count", false },
	    { "MESSAGE", "=message", false },
	    { "FIRST SEEN", "=firstseen", true },
	    { "SOURCE", "source.component", true },
	    { "NAME", "metadata.name", true } } },
	{ "Provider",
	  { { "NAME", "metadata.name", false },
	    { "VERSION", "spec.version", false },
	    { "KINDS", "=kinds", false },
	    { "LOADED", "status.loaded", false },
	    { "ERROR", "status.error", true } } },
	{ "Runner",
	  { { "NAME", "metadata.name", false },
	    { "PHASE", "status.phase", false },
	    { "LABELS", "=labels", false },
	    { "CONCURRENCY", "status.concurrency", false },
	    { "RUNNING", "=running", false },
	    { "LAST HEARTBEAT", "=heartbeat", false },
	    { "VERSION", "status.version", true } } },
	{ "User",
	  { { "NAME", "metadata.name", false },
	    { "ROLE", "spec.role", false },
	    { "DISABLED", "spec.disabled", false },
	    { "LAST LOGIN", "status.lastLogin", false },
	    { "AGE", "=age", false } } },
	{ "APIToken",
	  { { "NAME", "metadata.name", false },
	    { "ROLE", "spec.role", false },
	    { "EXPIRES", "spec.expiresAt", false },
	    { "LAST USED", "status.lastUsed", false },
	    { "DESCRIPTION", "spec.description", true } } },
};

static const struct table generic = {
	"", { { "NAME", "metadata.name", false }, { "AGE", "=age", false } }
};

static const struct {
	const char *path;
	const char *text;
} computed[] = {
	{ "=age", "the time since metadata.creationTimestamp" },
	{ "=machines", "status.machines: ready/desired" },
	{ "=changes", "status.changes: +add ~change -destroy" },
	{ "=lastrun", "status.lastRun: id (phase)" },
	{ "=lastseen", "the time since lastTimestamp" },
	{ "=firstseen", "the time since firstTimestamp" },
	{ "=object", "involvedObject: kind/name" },
	{ "=message", "message, on one line" },
	{ "=kinds", "spec.kinds, comma-separated" },
	{ "=labels", "status.labels as key=value, comma-separated" },
	{ "=running", "status.running: how many runs" },
	{ "=heartbeat", "the time since status.lastHeartbeat" },
	{ "=runner", "status.runner: the remote runner that ran the last step; - for the daemon's "
	             "own pool" },
};

const rz_column_t *rz_columns_of(const char *kind)
{
	for (size_t i = 0; kind != NULL && i < sizeof(tables) / sizeof(tables[0]); i++) {
		if (strcmp(tables[i].kind, kind) == 0) {
			return tables[i].cols;
		}
	}
	return generic.cols;
}

const char *rz_columns_describe(const rz_column_t *col)
{
	for (size_t i = 0; i < sizeof(computed) / sizeof(computed[0]); i++) {
		if (strcmp(computed[i].path, col->path) == 0) {
			return computed[i].text;
		}
	}
	return col->path;
}

/* ------------------------------------------------------------------ cells */

const char *rz_columns_cell(const json_t *o, const char *path, time_t now,
                            rz_columns_singular_fn singular, char *buf, size_t size)
{
	char num[32];

	buf[0] = '\0';

	if (strcmp(path, "=age") == 0) {
		rz_columns_age(str_at(o, "metadata.creationTimestamp"), now, buf, size);
	} else if (strcmp(path, "=machines") == 0) {
		json_t *m = at(o, "status.machines");
		if (m != NULL) {
			snprintf(buf, size, "%lld/%lld",
			         (long long)json_integer_value(json_object_get(m, "ready")),
			         (long long)json_integer_value(json_object_get(m, "desired")));
		}
	} else if (strcmp(path, "=changes") == 0) {
		json_t *ch = at(o, "status.changes");
		if (ch != NULL) {
			snprintf(buf, size, "+%lld ~%lld -%lld",
			         (long long)json_integer_value(json_object_get(ch, "add")),
			         (long long)json_integer_value(json_object_get(ch, "change")),
			         (long long)json_integer_value(json_object_get(ch, "destroy")));
		}
	} else if (strcmp(path, "=lastrun") == 0) {
		const char *id = str_at(o, "status.lastRun.id");
		if (id != NULL) {
			snprintf(buf, size, "%s (%s)", id,
			         str_at(o, "status.lastRun.phase")
			             ? str_at(o, "status.lastRun.phase")
			             : "?");
		}
	} else if (strcmp(path, "=lastseen") == 0 || strcmp(path, "=firstseen") == 0) {
		rz_columns_age(str_at(o, path[1] == 'l' ? "lastTimestamp" : "firstTimestamp"), now,
		               buf, size);
	} else if (strcmp(path, "=object") == 0) { /* kind/name, as kubectl's OBJECT */
		const char *kind = str_at(o, "involvedObject.kind");
		const char *k = singular != NULL && kind != NULL ? singular(kind) : NULL;
		size_t n = (size_t)snprintf(
		    buf, size, "%s/%s",
		    k      ? k
		    : kind ? kind
		           : "?",
		    str_at(o, "involvedObject.name") ? str_at(o, "involvedObject.name") : "?");
		for (size_t i = 0; k == NULL && i < n && buf[i] != '/'; i++) {
			buf[i] = (char)tolower((unsigned char)buf[i]);
		}
	} else if (strcmp(path, "=message") == 0) { /* one line a row */
		snprintf(buf, size, "%s", str_at(o, "message") ? str_at(o, "message") : "");
		for (char *p = buf; *p != '\0'; p++) {
			*p = *p == '\n' || *p == '\r' || *p == '\t' ? ' ' : *p;
		}
	} else if (strcmp(path, "=kinds") == 0) {
		json_t *k = at(o, "spec.kinds"), *x;
		size_t i, n = 0;
		json_array_foreach(k, i, x)
		{
			n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? "," : "",
			                      json_string_value(x) ? json_string_value(x) : "");
		}
	} else if (strcmp(path, "=labels") == 0) {
		const char *key;
		json_t *x;
		size_t n = 0;
		json_object_foreach(at(o, "status.labels"), key, x)
		{
			int w = snprintf(buf + n, size - n, "%s%s=%s", n ? "," : "", key,
			                 json_string_value(x) ? json_string_value(x) : "");
			if (w < 0 || (size_t)w >= size - n) {
				break;
			}
			n += (size_t)w;
		}
	} else if (strcmp(path, "=running") == 0) {
		json_t *r = at(o, "status.running");
		if (json_is_array(r)) {
			snprintf(buf, size, "%zu", json_array_size(r));
		}
	} else if (strcmp(path, "=runner") == 0) { /* "-": no runner, the daemon's own pool */
		snprintf(buf, size, "%s",
		         str_at(o, "status.runner") ? str_at(o, "status.runner") : "-");
	} else if (strcmp(path, "=heartbeat") == 0) {
		rz_columns_age(str_at(o, "status.lastHeartbeat"), now, buf, size);
	} else {
		snprintf(buf, size, "%s", scalar(at(o, path), num, sizeof(num)));
	}
	if (buf[0] == '\0') {
		snprintf(buf, size, "<none>");
	}
	return buf;
}
