/*
 * core/remote/agent.h - `rezuscloud runner` (rezuscloud(8) RUNNER, docs/runners.md): a
 * remote runner. It reads the runner.* settings (the same parser as the daemon's, from
 * -c FILE or RZ_RUNNER_CONFIG_DEFAULT_PATH, then REZUSCLOUD_RUNNER_* variables), connects
 * to NATS and publishes its heartbeat every runner.heartbeat until SIGTERM or SIGINT,
 * which sends a last heartbeat with "stopping": true; it takes its pools' jobs (work.c).
 */
#ifndef RZ_AGENT_H
#define RZ_AGENT_H

#include "core/base/config.h"

#define RZ_RUNNER_CONFIG_DEFAULT_PATH RZ_SYSCONFDIR "/rezus/runner.conf"

/* argv[0] is "runner" (the mode's name). Returns the exit status: 0 stopped by a signal
 * (or --check-config passed), 1 NATS refused or was lost for good, 2 bad command line or
 * configuration. */
int rz_agent_main(int argc, char **argv, char *const *envp);

#endif /* RZ_AGENT_H */
