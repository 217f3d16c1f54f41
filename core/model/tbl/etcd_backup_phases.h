/* core/model/tbl/etcd_backup_phases.h - where an EtcdBackup is (status.phase).
 * One RZ_STATE(ENUM, "Name") per value, in the order of the enum (core/model/states.h); the
 * includer defines RZ_STATE, this table undefines it. */
RZ_STATE(PENDING, "Pending")
RZ_STATE(RUNNING, "Running")
RZ_STATE(SUCCEEDED, "Succeeded")
RZ_STATE(FAILED, "Failed")
RZ_STATE(SKIPPED, "Skipped")
#undef RZ_STATE
