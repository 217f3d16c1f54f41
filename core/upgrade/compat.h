/*
 * core/upgrade/compat.h - versions and what may be upgraded to what (SPEC §8): the
 * Talos-to-Kubernetes compatibility table, in this one place, and the checks an upgrade's
 * target must pass whatever the cluster's state: no downgrade, one minor version at a time,
 * and a Talos release that supports the Kubernetes release.
 */
#ifndef RZ_COMPAT_H
#define RZ_COMPAT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct rz_version {
	int major, minor, patch;
} rz_version_t;

/* "1.12.0" or "v1.12.0" (a suffix such as "-beta.0" is ignored). false when s is not one. */
bool rz_version_parse(const char *s, rz_version_t *out);

/* <0, 0, >0 as a is older than, the same as, newer than b. */
int rz_version_cmp(const rz_version_t *a, const rz_version_t *b);

/* The version s as the API writes versions (spec.talosVersion, targetVersion): without
 * the "v" Talos and Kubernetes print ("v1.12.0" is "1.12.0"). s when it is no version.
 * Borrowed from s. */
const char *rz_version_bare(const char *s);

/* Whether two version texts name the same version ("v1.12.1" and "1.12.1" do). */
bool rz_version_same(const char *a, const char *b);

/* The Kubernetes minors Talos major.minor supports, from the table: false when the Talos
 * release is not in it. */
bool rz_compat_kubernetes(int talos_major, int talos_minor, int *k8s_min, int *k8s_max);

/* Whether Talos talos runs Kubernetes kubernetes; false with why (size ≥ 128) when not, or
 * when either is not a version or the Talos release is not in the table. */
bool rz_compat_check(const char *talos, const char *kubernetes, char *why, size_t size);

/* The move from from to to of component ("talos" or "kubernetes"): a newer version, at
 * most one minor further. Returns NULL when it may be made, else the failed check's name
 * ("NoDowngrade", "OneMinorAtATime") with why (size ≥ 128). */
const char *rz_compat_move(const char *component, const char *from, const char *to, char *why,
                           size_t size);

#endif /* RZ_COMPAT_H */
