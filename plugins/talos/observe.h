/*
 * plugins/talos/observe.h - how the talos plugin observes its clusters (ABI 1.1, the
 * "Observation" contract of rezus/plugin.h): the probes to run for a tenant and how their
 * output becomes facts. The entries of the descriptor in talos.c; see observe.c.
 */
#ifndef TALOS_OBSERVE_H
#define TALOS_OBSERVE_H

#include <stdbool.h>

#include <rezus/plugin.h>

/* observe_probes: ctx and probes are borrowed (probes an empty array to fill). */
int talos_observe_probes(void *state, const rezus_json_t *ctx, rezus_json_t *probes,
                         rezus_err_t *err);

/* observe_parse: probe, result and facts are borrowed (facts an empty object to fill). Bad
 * output is a fact ("error") and returns 0; only a probe this plugin never made is an error. */
int talos_observe_parse(void *state, const rezus_json_t *probe, const rezus_json_t *result,
                        rezus_json_t *facts, rezus_err_t *err);

/* Where a Machine's Talos API answers: spec.address, else the first of spec.addresses;
 * NULL when it has none. Borrowed from m. Also used by etcd.c. */
const char *talos_machine_address(const rezus_host_t *h, const rezus_json_t *m);

/* An address talosctl takes as one node: no flag, no list, no spaces. */
bool talos_usable_address(const char *a);

#endif /* TALOS_OBSERVE_H */
