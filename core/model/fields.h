/*
 * core/model/fields.h - declarative field schemas: strict validation with Kubernetes-style
 * causes, defaulting, and the OpenAPI schema of the same fields.
 *
 * A schema is a static array of rz_field_t terminated by an entry whose name is NULL.
 * The resource kinds describe their spec and status with these; the API validates every
 * write against them and /openapi/v3 is generated from them, so the two cannot disagree.
 */
#ifndef RZ_FIELDS_H
#define RZ_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

typedef enum rz_ftype {
	RZ_F_STRING = 1,
	RZ_F_INT, /* a JSON integer (a real such as 1.0 is a type error) */
	RZ_F_BOOL,
	RZ_F_OBJECT, /* members in .fields; unknown members are errors */
	RZ_F_ARRAY,  /* items of type .items; OBJECT items use .fields */
	RZ_F_MAP,  /* object of string -> string; keys checked by .key_format, values by .format */
	RZ_F_ANY,  /* any JSON object, not inspected (e.g. providerConfig, validated elsewhere) */
	RZ_F_TIME, /* a string in RFC 3339 form, e.g. 2026-11-30T04:31:11Z */
} rz_ftype_t;

/* A format check: true when s is valid; otherwise a reason ("must be a CIDR such as
 * 10.0.0.0/8") is written into msg (NUL-terminated, at most size bytes). */
typedef bool (*rz_format_fn)(const char *s, char *msg, size_t size);

typedef struct rz_field {
	const char *name; /* NULL ends the list */
	rz_ftype_t type;
	const char *doc; /* one line for the OpenAPI description */
	bool required;
	const struct rz_field *fields; /* OBJECT, or ARRAY of OBJECT: the members */
	rz_ftype_t items;              /* ARRAY: item type */
	const char *const *enums;      /* STRING (or ARRAY of STRING): allowed values, NULL-ended */
	rz_format_fn format;           /* STRING (or ARRAY items, or MAP values): extra check */
	rz_format_fn key_format;       /* MAP: key check */
	const char *format_name;       /* OpenAPI "format", e.g. "cidr", "dns1123-label" */
	bool ranged;                   /* INT: min..max applies */
	int64_t min, max;
	size_t max_len;   /* STRING: bytes; ARRAY: items; MAP: entries (0 = no limit) */
	bool unique;      /* ARRAY of STRING: no duplicates */
	const char *def;  /* JSON text applied when the member is absent */
	size_t max_bytes; /* MAP: keys and values together, in bytes (0 = no limit) */
} rz_field_t;

/* Cause reasons (Kubernetes CauseType values). */
#define RZ_CAUSE_REQUIRED      "FieldValueRequired"
#define RZ_CAUSE_INVALID       "FieldValueInvalid"
#define RZ_CAUSE_NOT_SUPPORTED "FieldValueNotSupported"
#define RZ_CAUSE_TOO_LONG      "FieldValueTooLong"
#define RZ_CAUSE_TOO_MANY      "FieldValueTooMany"
#define RZ_CAUSE_DUPLICATE     "FieldValueDuplicate"
#define RZ_CAUSE_FORBIDDEN     "FieldValueForbidden"

/* Append {field, reason, message} to the causes array (borrowed). */
void rz_fields_cause(json_t *causes, const char *field, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Validate obj (a JSON object, borrowed, modified only to insert defaults when
 * apply_defaults) against fields; path is the prefix for cause fields ("spec"). Appends
 * one cause per bad field to causes, in field order, and returns how many it added.
 * Paths: "spec.count", "spec.podSubnets[1]", "spec.taints[0].effect", map entries
 * "spec.labels[example.com/role]". Messages:
 *   unknown member:  FieldValueInvalid  "unknown field"
 *   wrong type:      FieldValueInvalid  "expected a string, got a number" (string, integer,
 *                    boolean, object, array, RFC 3339 time; got a string, number, boolean,
 *                    object, array, null)
 *   missing:         FieldValueRequired "required"
 *   enum:            FieldValueNotSupported "supported values: \"controlplane\", \"worker\""
 *   range:           FieldValueInvalid  "must be between 0 and 1000"
 *   length:          FieldValueTooLong  "must be at most 63 characters" / FieldValueTooMany
 *                    "must have at most 16 items" / FieldValueTooLong (a map's max_bytes)
 *                    "must have at most 262144 bytes (keys and values together)"
 *   duplicate:       FieldValueDuplicate "duplicate value \"10.0.0.0/8\""
 *   format:          FieldValueInvalid  with the format function's message
 * A member whose value is JSON null counts as absent. */
int rz_fields_validate(json_t *obj, const rz_field_t *fields, const char *path, bool apply_defaults,
                       json_t *causes);

/* Remove from obj (a JSON object, borrowed, adjusted) every member fields does not
 * declare, at any depth the schema describes (objects, arrays of objects; maps and ANY are
 * not inspected); append each one's path ("spec.foo", "spec.taints[0].bar", prefixed by
 * path) to dropped (may be NULL). Returns how many were removed. For fieldValidation
 * Ignore and Warn (core/api/validate.c). */
size_t rz_fields_drop_unknown(json_t *obj, const rz_field_t *fields, const char *path,
                              json_t *dropped);

/* The same below v, the value of a member declared by f, at path. */
size_t rz_fields_drop_unknown_member(json_t *v, const rz_field_t *f, const char *path,
                                     json_t *dropped);

/* The OpenAPI 3 schema of an object with these fields:
 * {"type":"object","properties":{...},"required":[...],"additionalProperties":false}
 * with descriptions, enums, formats, minimum/maximum, maxLength/maxItems and defaults.
 * Caller owns the result; NULL on out of memory. */
json_t *rz_fields_openapi(const rz_field_t *fields);

/* ---- formats ---- */

bool rz_format_dns1123_label(const char *s, char *msg,
                             size_t size); /* ≤ 63, [a-z0-9-], alnum ends */
bool rz_format_dns1123_subdomain(const char *s, char *msg,
                                 size_t size); /* ≤ 253, labels joined by '.' */
bool rz_format_label_key(const char *s, char *msg,
                         size_t size); /* [prefix/]name, Kubernetes rules */
bool rz_format_label_value(const char *s, char *msg, size_t size); /* ≤ 63, may be empty */
bool rz_format_cidr(const char *s, char *msg,
                    size_t size); /* IPv4 or IPv6 prefix, host bits zero */
bool rz_format_version(const char *s, char *msg,
                       size_t size);                        /* MAJOR.MINOR.PATCH, no leading 'v' */
bool rz_format_url(const char *s, char *msg, size_t size);  /* http(s)://host[:port][/path] */
bool rz_format_yaml(const char *s, char *msg, size_t size); /* parses as YAML (libyaml) */
bool rz_format_duration(const char *s, char *msg,
                        size_t size); /* 0, or a number with ms, s, m, h or d, as rezus.conf */
bool rz_format_qualified_name(const char *s, char *msg,
                              size_t size); /* finalizers: [prefix/]name */

#endif /* RZ_FIELDS_H */
