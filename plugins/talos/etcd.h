/*
 * plugins/talos/etcd.h - etcd snapshots of talos clusters (ABI 1.3, "Etcd snapshots" in
 * rezus/plugin.h): the descriptor's etcd_commands entry, in etcd.c.
 */
#ifndef TALOS_ETCD_H
#define TALOS_ETCD_H

#include <rezus/plugin.h>

/* etcd_commands: ctx and commands are borrowed (commands an empty array to fill). A ctx
 * whose machine has no usable address, or whose path is not absolute, is REZUS_EINVALID. */
int talos_etcd_commands(void *state, const rezus_json_t *ctx, rezus_json_t *commands,
                        rezus_err_t *err);

#endif /* TALOS_ETCD_H */
