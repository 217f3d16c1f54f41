/*
 * rezus/host.h - the services the RezusCloud host offers a plugin.
 *
 * The host passes a rezus_host_t to the plugin's init(); the plugin keeps the pointer for
 * its whole life (it stays valid until fini() returns) and passes it back as the first
 * argument of every service, which is how the host knows which plugin is calling (its log
 * lines are prefixed with the plugin's name).
 *
 * JSON values are opaque handles (rezus_json_t). Ownership is stated on every function:
 *   "borrowed"        — valid until the call that handed it to you returns (or, for values
 *                       read from a borrowed value, as long as that value);
 *   "caller owns"     — release with json_free();
 *   "takes ownership" — the value belongs to the container afterwards, even on error.
 * No memory is ever freed with the other side's allocator. Strings from the arena services
 * (alloc, strdup, printf, tf_escape, tf_name) live until the current vtable call returns.
 *
 * Optional members: test with REZUS_HOST_HAS(host, member) before calling anything added
 * after ABI 1.0.
 */
#ifndef REZUS_HOST_H
#define REZUS_HOST_H

#include <stddef.h>
#include <stdint.h>

#include <rezus/errors.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rezus_json rezus_json_t;
typedef struct rezus_host rezus_host_t;

/* Log levels: the syslog ones. */
enum {
	REZUS_LOG_ERR = 3,
	REZUS_LOG_WARNING = 4,
	REZUS_LOG_NOTICE = 5,
	REZUS_LOG_INFO = 6,
	REZUS_LOG_DEBUG = 7,
};

/* JSON types as json_type() reports them. */
enum {
	REZUS_JSON_INVALID = 0,
	REZUS_JSON_OBJECT,
	REZUS_JSON_ARRAY,
	REZUS_JSON_STRING,
	REZUS_JSON_INTEGER,
	REZUS_JSON_REAL,
	REZUS_JSON_BOOL,
	REZUS_JSON_NULL,
};

struct rezus_host {
	/* --- frozen: struct_size first, so members added later can be tested for --- */
	uint32_t struct_size;
	uint16_t abi_major, abi_minor;
	void *priv; /* the host's; never touched by plugins */

	/* --- ABI 1.0 --- */

	/* One log line, prefixed with the plugin's name. fmt is printf-style. */
	void (*log)(const rezus_host_t *h, int level, const char *fmt, ...)
#if defined(__GNUC__)
	    __attribute__((format(printf, 3, 4)))
#endif
	    ;

	/* Fill err (caller owns; may be NULL) with code and a printf-style message; returns code.
	 */
	int (*error)(const rezus_host_t *h, rezus_err_t *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
	    __attribute__((format(printf, 4, 5)))
#endif
	    ;

	/* Building. Each returns a new value (caller owns) or NULL when out of memory. */
	rezus_json_t *(*json_object)(const rezus_host_t *h);
	rezus_json_t *(*json_array)(const rezus_host_t *h);
	rezus_json_t *(*json_string)(const rezus_host_t *h, const char *s);
	rezus_json_t *(*json_integer)(const rezus_host_t *h, int64_t v);
	rezus_json_t *(*json_real)(const rezus_host_t *h, double v);
	rezus_json_t *(*json_bool)(const rezus_host_t *h, int v);
	rezus_json_t *(*json_null)(const rezus_host_t *h);
	/* Parse text; caller owns the result. NULL with err filled when it does not parse. */
	rezus_json_t *(*json_parse)(const rezus_host_t *h, const char *text, rezus_err_t *err);
	/* obj[key] = value / arr += value: takes ownership of value. 0, or a negative code. */
	int (*json_set)(const rezus_host_t *h, rezus_json_t *obj, const char *key,
	                rezus_json_t *value);
	int (*json_append)(const rezus_host_t *h, rezus_json_t *arr, rezus_json_t *value);
	/* Release a value the caller owns. Accepts NULL. */
	void (*json_free)(const rezus_host_t *h, rezus_json_t *v);

	/* Reading. Results are borrowed from v. */
	int (*json_type)(const rezus_host_t *h, const rezus_json_t *v);
	const rezus_json_t *(*json_get)(const rezus_host_t *h, const rezus_json_t *obj,
	                                const char *key);
	/* Dotted path ("spec.providerConfig.shape"); NULL when any step is missing. */
	const rezus_json_t *(*json_path)(const rezus_host_t *h, const rezus_json_t *v,
	                                 const char *path);
	const rezus_json_t *(*json_at)(const rezus_host_t *h, const rezus_json_t *arr, size_t i);
	/* Members of an object or items of an array; 0 for scalars. */
	size_t (*json_size)(const rezus_host_t *h, const rezus_json_t *v);
	/* The i-th key of an object in sorted order; NULL past the end. */
	const char *(*json_key_at)(const rezus_host_t *h, const rezus_json_t *obj, size_t i);
	/* Scalars: NULL / 0 when v is not of that type. */
	const char *(*json_string_value)(const rezus_host_t *h, const rezus_json_t *v);
	int64_t (*json_integer_value)(const rezus_host_t *h, const rezus_json_t *v);
	double (*json_real_value)(const rezus_host_t *h, const rezus_json_t *v);
	int (*json_bool_value)(const rezus_host_t *h, const rezus_json_t *v);

	/* The plugin's own config subtree (handed to init and check_config), read with a
	 * default. config is borrowed. */
	const char *(*config_string)(const rezus_host_t *h, const rezus_json_t *config,
	                             const char *key, const char *def);
	int64_t (*config_int)(const rezus_host_t *h, const rezus_json_t *config, const char *key,
	                      int64_t def);
	int (*config_bool)(const rezus_host_t *h, const rezus_json_t *config, const char *key,
	                   int def);

	/* Arena memory: valid until the current vtable call returns; never free it. NULL when
	 * out of memory (or outside a vtable call). */
	void *(*alloc)(const rezus_host_t *h, size_t size);
	char *(*strdup)(const rezus_host_t *h, const char *s);
	char *(*printf)(const rezus_host_t *h, const char *fmt, ...)
#if defined(__GNUC__)
	    __attribute__((format(printf, 2, 3)))
#endif
	    ;

	/* TF strings (rezus-plugin(7)): s with "${" written "$${" and "%{" written "%%{", so a
	 * user's text never becomes a template; and s turned into a TF identifier ([a-z0-9_],
	 * starting with a letter). Arena strings. */
	char *(*tf_escape)(const rezus_host_t *h, const char *s);
	char *(*tf_name)(const rezus_host_t *h, const char *s);
};

/* True when the host's table has member m (added in a later minor than the plugin knows). */
#define REZUS_HOST_HAS(h, m)                                                                       \
	((h) != NULL && (h)->struct_size >= offsetof(rezus_host_t, m) + sizeof((h)->m) &&          \
	 (h)->m != NULL)

#ifdef __cplusplus
}
#endif

#endif /* REZUS_HOST_H */
