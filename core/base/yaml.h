/*
 * core/base/yaml.h - YAML to JSON through libyaml, for the config file's plugin sections, for
 * request bodies sent as application/yaml, and for manifests. Plain scalars follow the YAML
 * 1.2 core schema (null, booleans, integers, reals); quoted or tagged scalars are strings.
 * Aliases, duplicate keys, non-string keys, nesting deeper than 64 levels and more than
 * 100,000 nodes are refused.
 * Every error names the source and the line: "rezus.conf:5: duplicate key 'x'".
 */
#ifndef RZ_YAML_H
#define RZ_YAML_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>
#include <yaml.h>

#include "core/base/errors.h"

/* The deepest nesting of sequences and mappings any YAML the daemon reads may have: libyaml
 * takes time quadratic in the depth, so a parser stops at this one. */
#define RZ_YAML_MAX_DEPTH 64

/* The most nodes (scalars, sequences, mappings) one read of YAML may hold, all documents
 * together: each costs libyaml and jansson time on the caller's thread (the loop, for a
 * request body), about 1.7 µs; 100,000 are a few MB of YAML, far beyond any object's. */
#define RZ_YAML_MAX_NODES 100000

typedef struct rz_yaml {
	yaml_parser_t parser;
	const char *name; /* the source, for messages */
	const char *data;
	size_t len;
	rz_err_t *err;
	int code; /* the error code of content problems (REZUS_ECONFIG, REZUS_EINVALID) */
	int depth;
	size_t nodes; /* read so far, against RZ_YAML_MAX_NODES */
} rz_yaml_t;

/* Start reading data (borrowed; must outlive y). 0, or -ENOMEM with err filled. */
int rz_yaml_init(rz_yaml_t *y, const char *name, const char *data, size_t len, int code,
                 rz_err_t *err);
void rz_yaml_fini(rz_yaml_t *y);

/* The next event (caller deletes it); a syntax error (RZ_EPARSE) or an alias (y->code). */
int rz_yaml_next(rz_yaml_t *y, yaml_event_t *ev);

/* The node that starts with ev (already read) as JSON: *out is the caller's. path names it
 * in messages ("plugins.oci.shape"). */
int rz_yaml_node(rz_yaml_t *y, const char *path, const yaml_event_t *ev, json_t **out);

/* Every non-empty document of data, as an array of JSON values (caller owns). Content
 * problems are REZUS_EINVALID. */
int rz_yaml_load_all(const char *name, const char *data, size_t len, json_t **docs, rz_err_t *err);

/* Event helpers. */
int rz_yaml_line(const yaml_event_t *ev);        /* 1-based */
const char *rz_yaml_got(const yaml_event_t *ev); /* "a mapping", "a list", "a scalar" */
const char *rz_yaml_text(const yaml_event_t *ev);
bool rz_yaml_is_plain(const yaml_event_t *ev);
bool rz_yaml_is_null(const yaml_event_t *ev);

#endif /* RZ_YAML_H */
