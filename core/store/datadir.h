/*
 * core/store/datadir.h - the data dir's files: private modes, and a write probe that says
 * whether the disk under it still takes writes (full, read-only, failing).
 */
#ifndef RZ_DATADIR_H
#define RZ_DATADIR_H

#include "core/base/errors.h"

/* Take group and other permissions off every file and directory under path (path itself
 * included; symlinks not followed, files of other owners left alone): the data dir holds
 * keys, password hashes and TF state. One warning names how many were corrected and the
 * first of them. Returns the count corrected (0 when all were private), or a negative error
 * when path cannot be walked. path is borrowed. */
int rz_datadir_secure(const char *path, rz_err_t *err);

/* Write one 4 KiB file (path/.rezus-probe, 0600), fsync it and remove it: 0 when the disk
 * takes it, else the negated errno (-ENOSPC, -EROFS, -EIO, ...) with err naming the data
 * dir and the reason. Cheap enough for a timer; not for every request. */
int rz_datadir_probe(const char *path, rz_err_t *err);

#endif /* RZ_DATADIR_H */
