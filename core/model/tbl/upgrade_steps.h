/* core/model/tbl/upgrade_steps.h - a machine's step in an upgrade
 * (UpgradeRun.status.machines[].phase). One RZ_STATE(ENUM, "Name") per value, in the order of the
 * enum (core/model/states.h); the includer defines RZ_STATE, this table undefines it. */
RZ_STATE(PENDING, "Pending")
RZ_STATE(UPGRADING, "Upgrading")
RZ_STATE(VERIFYING, "Verifying")
RZ_STATE(SUCCEEDED, "Succeeded")
RZ_STATE(ROLLING_BACK, "RollingBack")
RZ_STATE(ROLLED_BACK, "RolledBack")
RZ_STATE(FAILED, "Failed")
RZ_STATE(SKIPPED, "Skipped")
#undef RZ_STATE
