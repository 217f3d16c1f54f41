/*
 * core/base/settings.h - the configuration's schema table, shared by core/base/config.c
 * (which reads values into it) and core/base/settings.c (which lists the keys). Private to
 * those two files: everything else uses core/base/config.h.
 */
#ifndef RZ_SETTINGS_H
#define RZ_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

#include "core/base/config.h"
#include "core/base/errors.h"

#define RZ__SETTINGS_MAX 160 /* settings.c checks the table fits */

#define FIELD(cfg, s, type) ((type *)(void *)((char *)(cfg) + (s)->offset))

enum kind { K_SECTION, K_PLUGINS, K_STRING, K_INT, K_BOOL, K_DURATION, K_SIZE, K_LIST };

enum {
	F_NONEMPTY = 1 << 0, /* rz_config_validate() rejects "" */
	F_NONZERO = 1 << 1,  /* a duration or size of 0 is invalid */
};

struct rz__setting;

typedef int (*check_fn)(const struct rz__setting *s, const char *value, const char *origin,
                        rz_err_t *err);
typedef int (*verify_fn)(const struct rz__setting *s, const rz_config_t *cfg, rz_err_t *err);
typedef int (*set_fn)(rz_config_t *cfg, const struct rz__setting *s, const char *value,
                      const char *origin, rz_err_t *err);

struct rz__setting {
	const char *key; /* dotted: "tofu.workers" */
	enum kind kind;
	size_t offset;         /* into rz_config_t */
	const char *def;       /* default, as text a flag would give */
	int64_t min, max;      /* K_INT only */
	unsigned flags;        /* F_* */
	const char *env_alias; /* a short environment name besides the derived one */
	check_fn check;        /* extra check when the value is set */
	verify_fn verify;      /* extra check in rz_config_validate() */
	const char *help;
};

/* Every key, sections before their keys; rz__settings_n entries. */
extern const struct rz__setting rz__settings[];
extern const size_t rz__settings_n;

/* A K_STRING setting's value in cfg ("" when unset). */
const char *rz__setting_string(const rz_config_t *cfg, const struct rz__setting *s);

#endif /* RZ_SETTINGS_H */
