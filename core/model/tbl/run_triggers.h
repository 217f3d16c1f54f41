/* core/model/tbl/run_triggers.h - why a Run was made (spec.trigger).
 * One RZ_STATE(ENUM, "Name") per value, in the order of the enum (core/model/states.h); the
 * includer defines RZ_STATE, this table undefines it. */
RZ_STATE(CREATE, "create")
RZ_STATE(UPDATE, "update")
RZ_STATE(RESYNC, "resync")
RZ_STATE(MANUAL, "manual")
RZ_STATE(DELETE, "delete")
RZ_STATE(UPGRADE, "upgrade")
#undef RZ_STATE
