/* core/upgrade/compat.c - versions, and the Talos-to-Kubernetes compatibility table. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/upgrade/compat.h"

/* Talos releases and the Kubernetes minors each supports (1.x), from the Talos support
 * matrix of each release (docs.siderolabs.com, "Support Matrix"). A release not listed
 * here cannot be upgraded to until it is added. */
static const struct {
	int talos_minor;
	int k8s_min, k8s_max;
} table[] = {
	{ 6, 24, 29 },  { 7, 25, 30 },  { 8, 26, 31 },  { 9, 27, 32 },
	{ 10, 28, 33 }, { 11, 29, 34 }, { 12, 30, 35 }, { 13, 31, 36 },
};

static bool number(const char **p, int *out)
{
	char *end;
	long v;

	if (**p < '0' || **p > '9') {
		return false;
	}
	v = strtol(*p, &end, 10);
	if (v > 1000000) {
		return false;
	}
	*out = (int)v;
	*p = end;
	return true;
}

bool rz_version_parse(const char *s, rz_version_t *out)
{
	const char *p = s;

	if (s == NULL) {
		return false;
	}
	if (*p == 'v') {
		p++;
	}
	if (!number(&p, &out->major) || *p++ != '.' || !number(&p, &out->minor) || *p++ != '.' ||
	    !number(&p, &out->patch)) {
		return false;
	}
	return *p == '\0' || *p == '-' || *p == '+';
}

const char *rz_version_bare(const char *s)
{
	rz_version_t v;

	return s != NULL && s[0] == 'v' && rz_version_parse(s, &v) ? s + 1 : s;
}

int rz_version_cmp(const rz_version_t *a, const rz_version_t *b)
{
	if (a->major != b->major) {
		return a->major < b->major ? -1 : 1;
	}
	if (a->minor != b->minor) {
		return a->minor < b->minor ? -1 : 1;
	}
	return a->patch < b->patch ? -1 : a->patch > b->patch;
}

bool rz_version_same(const char *a, const char *b)
{
	rz_version_t va, vb;

	return rz_version_parse(a, &va) && rz_version_parse(b, &vb) &&
	       rz_version_cmp(&va, &vb) == 0;
}

bool rz_compat_kubernetes(int talos_major, int talos_minor, int *k8s_min, int *k8s_max)
{
	for (size_t i = 0; talos_major == 1 && i < sizeof(table) / sizeof(table[0]); i++) {
		if (table[i].talos_minor == talos_minor) {
			*k8s_min = table[i].k8s_min;
			*k8s_max = table[i].k8s_max;
			return true;
		}
	}
	return false;
}

bool rz_compat_check(const char *talos, const char *kubernetes, char *why, size_t size)
{
	rz_version_t t, k;
	int lo, hi;

	if (!rz_version_parse(talos, &t) || !rz_version_parse(kubernetes, &k)) {
		snprintf(why, size, "'%s' or '%s' is not a version", talos ? talos : "",
		         kubernetes ? kubernetes : "");
		return false;
	}
	if (!rz_compat_kubernetes(t.major, t.minor, &lo, &hi)) {
		snprintf(why, size,
		         "Talos %d.%d is not in the compatibility table (Talos 1.%d to 1.%d are)",
		         t.major, t.minor, table[0].talos_minor,
		         table[sizeof(table) / sizeof(table[0]) - 1].talos_minor);
		return false;
	}
	if (k.major != 1 || k.minor < lo || k.minor > hi) {
		snprintf(why, size, "Talos %d.%d runs Kubernetes 1.%d to 1.%d, not %d.%d", t.major,
		         t.minor, lo, hi, k.major, k.minor);
		return false;
	}
	return true;
}

const char *rz_compat_move(const char *component, const char *from, const char *to, char *why,
                           size_t size)
{
	const char *what = strcmp(component, "kubernetes") == 0 ? "Kubernetes" : "Talos";
	rz_version_t f, t;

	if (!rz_version_parse(from, &f) || !rz_version_parse(to, &t)) {
		snprintf(why, size, "'%s' or '%s' is not a version", from ? from : "",
		         to ? to : "");
		return "NoDowngrade";
	}
	if (rz_version_cmp(&t, &f) < 0) {
		snprintf(why, size, "%s %s is older than the %s the cluster runs: no downgrade",
		         what, to, from);
		return "NoDowngrade";
	}
	if (rz_version_cmp(&t, &f) == 0) {
		snprintf(why, size, "the cluster already runs %s %s", what, from);
		return "NoDowngrade";
	}
	if (t.major != f.major || t.minor > f.minor + 1) {
		snprintf(why, size,
		         "%s %s is more than one minor version after %s: upgrade to %d.%d first",
		         what, to, from, f.major, f.minor + 1);
		return "OneMinorAtATime";
	}
	return NULL;
}
