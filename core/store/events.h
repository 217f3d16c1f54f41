/*
 * core/store/events.h - Kubernetes-style Events (SPEC §4 Event): what the engine and the
 * observer noticed about an object, recorded with deduplication and kept bounded.
 *
 * An Event is an object of kind Event in the store, so watches see it ADDED, MODIFIED and
 * DELETED like any other (not to be confused with the store's change log, whose entries
 * the bus calls events too). Its fields sit at the top level, as in Kubernetes:
 *
 *   {"apiVersion": "rezuscloud.io/v1", "kind": "Event",
 *    "metadata": {"name": "web.1a2b3c4d", "tenant": "acme", ...},
 *    "involvedObject": {"kind": "NodeGroup", "name": "web", "namespace": "acme",
 *                       "uid": "...", "apiVersion": "rezuscloud.io/v1"},
 *    "reason": "ScaledUp", "message": "...", "type": "Normal", "count": 2,
 *    "firstTimestamp": "2026-11-30T04:31:11.120Z", "lastTimestamp": "...",
 *    "source": {"component": "engine"}}
 *
 * The name is the involved object's, a dot and 8 hex digits of a hash of (kind, name,
 * reason, type), so finding the Event a repeat belongs to is a get by name. Loop thread
 * only, like the store.
 */
#ifndef RZ_EVENTS_H
#define RZ_EVENTS_H

#include <stdint.h>

#include "core/store/store.h"

/* Record that something happened to the object kind/name in tenant. type is "Normal" or
 * "Warning"; reason is CamelCase (at most 128 bytes); message is for people (cut to 1024
 * bytes); component names the recorder ("engine", "observer"). All borrowed.
 *
 * The same (kind, name, reason, type) again in the tenant adds one to count, moves
 * lastTimestamp to now and takes the new message (a status write of the store: watches
 * see MODIFIED); anything else starts a new Event at count 1 (ADDED). involvedObject.uid
 * is the object's uid when the store holds it, involvedObject.namespace the tenant when
 * the kind is a tenant's (a Tenant's own events have none, as a cluster-scoped object's).
 * A tenant that is gone records nothing; one being deleted still does (its teardown has
 * events of its own).
 *
 * Recording never fails the caller's operation: a problem is logged, once, and returned
 * for tests: 0 when recorded or dropped on purpose, REZUS_EINVALID for arguments the
 * Event schema refuses, the store's code when it failed. Callers may ignore the result. */
int rz_events_record(rz_store_t *st, const char *tenant, const char *kind, const char *name,
                     const char *type, const char *reason, const char *message,
                     const char *component);

/* Delete the Events whose lastTimestamp is older than now_ms - retention_ms, and in each
 * tenant holding more than max_per_tenant the oldest beyond that many (newest kept, by
 * lastTimestamp, then resourceVersion). retention_ms <= 0 or max_per_tenant <= 0 turns
 * that rule off. Each deletion is a store write of its own (watches see DELETED).
 * Returns how many were deleted, or a negative code when the Events could not be read;
 * problems are logged once per call, a failed deletion is skipped. */
int rz_events_prune(rz_store_t *st, int64_t retention_ms, int max_per_tenant, int64_t now_ms);

#endif /* RZ_EVENTS_H */
