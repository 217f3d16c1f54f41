/* core/model/tbl/upgrade_phases.h - where an UpgradeRun is (status.phase).
 * One RZ_STATE(ENUM, "Name") per value, in the order of the enum (core/model/states.h); the
 * includer defines RZ_STATE, this table undefines it. */
RZ_STATE(PENDING, "Pending")
RZ_STATE(PRECHECKING, "Prechecking")
RZ_STATE(UPGRADING, "Upgrading")
RZ_STATE(SUCCEEDED, "Succeeded")
RZ_STATE(FAILED, "Failed")
RZ_STATE(CANCELED, "Canceled")
RZ_STATE(ROLLED_BACK, "RolledBack")
#undef RZ_STATE
