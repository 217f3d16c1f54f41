/*
 * core/model/columns.h - the columns of each kind's table, one place for the two who print
 * them: rezusctl get (cli/out.c) and the API's Kubernetes Table replies (as=Table, which
 * kubectl asks for), so both show the same columns and the same cells.
 */
#ifndef RZ_COLUMNS_H
#define RZ_COLUMNS_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include <jansson.h>

#define RZ_COLUMNS_MAX 10
#define RZ_CELL_MAX    256 /* a cell's text, cut there */

typedef struct rz_column {
	const char *header; /* as printed: "NAME", "LAST RUN" */
	const char *path;   /* a dotted path, or a computed cell: "=age", "=ready", ... */
	bool wide;          /* only with -o wide (a Table column of priority 1) */
} rz_column_t;

/* The columns of kind (by Kind; NAME and AGE for a kind without its own table), ended by a
 * column whose header is NULL. Borrowed: static. */
const rz_column_t *rz_columns_of(const char *kind);

/* How a column describes its cells (a Table's columnDefinitions[].description). */
const char *rz_columns_describe(const rz_column_t *col);

/* Names a kind as people type it ("upgrade" for UpgradeRun), for an Event's OBJECT; NULL
 * when unknown (the kind in lower case is used). */
typedef const char *(*rz_columns_singular_fn)(const char *kind);

/* The cell of path for object o (borrowed) at time now into buf (size bytes): "<none>"
 * when the object has nothing there. singular may be NULL. Returns buf. */
const char *rz_columns_cell(const json_t *o, const char *path, time_t now,
                            rz_columns_singular_fn singular, char *buf, size_t size);

/* The age of an RFC 3339 time at now, as kubectl prints one ("42s", "5m", "3h", "2d"), or
 * "<unknown>". Returns buf. */
const char *rz_columns_age(const char *rfc3339, time_t now, char *buf, size_t size);

#endif /* RZ_COLUMNS_H */
