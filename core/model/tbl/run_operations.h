/* core/model/tbl/run_operations.h - what a Run does (spec.operation).
 * One RZ_STATE(ENUM, "Name") per value, in the order of the enum (core/model/states.h); the
 * includer defines RZ_STATE, this table undefines it. */
RZ_STATE(PLAN, "plan")
RZ_STATE(APPLY, "apply")
RZ_STATE(DESTROY, "destroy")
#undef RZ_STATE
