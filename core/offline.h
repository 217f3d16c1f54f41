/*
 * core/offline.h - the daemon binary's offline modes (docs/backups.md):
 *
 *   rezuscloud backup verify FILE
 *   rezuscloud restore FILE [--dry-run] [--data-dir DIR] [--passphrase-file F] [-c CONF]
 *
 * verify reads every byte of a backup and says what it holds. restore unpacks one into a
 * data dir no daemon holds (its rezuscloud.lock, taken as the daemon takes it), keeping
 * the database it replaces beside it; the state key comes back when the backup holds it
 * sealed and the passphrase is given, or must be copied by the operator, as the output
 * says. --dry-run changes nothing and says what a restore would change. Reports go to
 * stdout, errors to stderr on one line each; exit 0 on success, 1 on failure, 2 for a bad
 * command line or configuration.
 */
#ifndef RZ_OFFLINE_H
#define RZ_OFFLINE_H

/* argv[1] is "backup" or "restore". Returns the process exit code. */
int rz_offline_main(int argc, char **argv, char *const *envp);

#endif /* RZ_OFFLINE_H */
