/* core/model/tbl/etcd_restore_phases.h - where an EtcdRestore is (status.phase).
 * One RZ_STATE(ENUM, "Name") per value, in the order of the enum (core/model/states.h); the
 * includer defines RZ_STATE, this table undefines it. */
RZ_STATE(PENDING, "Pending")
RZ_STATE(RUNNING, "Running")
RZ_STATE(SUCCEEDED, "Succeeded")
RZ_STATE(FAILED, "Failed")
#undef RZ_STATE
