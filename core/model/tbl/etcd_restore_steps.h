/* core/model/tbl/etcd_restore_steps.h - the steps of an EtcdRestore (status.steps[].name),
 * in the order they run; a dry run stops after Verify.
 * One RZ_STATE(ENUM, "Name") per value, in the order of the enum (core/model/states.h); the
 * includer defines RZ_STATE, this table undefines it. */
RZ_STATE(PRECHECK, "Precheck")
RZ_STATE(DOWNLOAD, "Download")
RZ_STATE(VERIFY, "Verify")
RZ_STATE(RESTORE, "Restore")
RZ_STATE(WAIT_HEALTHY, "WaitHealthy")
#undef RZ_STATE
