/* core/model/tbl/run_phases.h - where a Run is (status.phase).
 * One RZ_STATE(ENUM, "Name") per value, in the order of the enum (core/model/states.h); the
 * includer defines RZ_STATE, this table undefines it. */
RZ_STATE(QUEUED, "Queued")
RZ_STATE(RUNNING, "Running")
RZ_STATE(AWAITING_APPROVAL, "AwaitingApproval")
RZ_STATE(SUCCEEDED, "Succeeded")
RZ_STATE(FAILED, "Failed")
RZ_STATE(CANCELED, "Canceled")
RZ_STATE(INTERRUPTED, "Interrupted")
#undef RZ_STATE
