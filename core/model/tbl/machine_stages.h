/* core/model/tbl/machine_stages.h - the stages of plugin ABI 1.1's observation
 * (Machine.status.stage): what core/plugin/probe.c accepts from a plugin.
 * One RZ_STATE(ENUM, "Name") per value, in the order of the enum (core/model/states.h); the
 * includer defines RZ_STATE, this table undefines it. */
RZ_STATE(PROVISIONING, "Provisioning")
RZ_STATE(BOOTING, "Booting")
RZ_STATE(INSTALLING, "Installing")
RZ_STATE(MAINTENANCE, "Maintenance")
RZ_STATE(RUNNING, "Running")
RZ_STATE(REBOOTING, "Rebooting")
RZ_STATE(SHUTTING_DOWN, "ShuttingDown")
RZ_STATE(RESETTING, "Resetting")
RZ_STATE(UPGRADING, "Upgrading")
RZ_STATE(REMOVING, "Removing")
RZ_STATE(FAILED, "Failed")
RZ_STATE(UNKNOWN, "Unknown")
#undef RZ_STATE
