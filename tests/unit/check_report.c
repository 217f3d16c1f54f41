/* tests/unit/check_report.c - a tenant's phase and conditions, derived from what is known. */
#include <config.h>

#include <string.h>

#include "core/engine/report.h"
#include "tests/unit/testutil.h"

#define MIN (60 * 1000)

static const struct phase_case {
	const char *what;
	rz_phase_in_t in;
	const char *phase, *machines, *machines_reason, *cp, *cp_reason;
} cases[] = {
	/* clang-format off */
/* one case a paragraph reads better than one member a line */
{ "created, nothing applied yet",
  { .has_controlplane = true, .desired = 3 },
  "Pending", "False", "NotAllReady", "Unknown", "NotObserved" },
{ "no node groups at all",
  { .applied = true, .applied_ms = 1, .now_ms = 2 },
  "Provisioning", "True", "AllReady", "False", "NoControlPlane" },
{ "workers but no control plane",
  { .applied = true, .desired = 2, .total = 2, .ready = 2, .observed = true },
  "Provisioning", "True", "AllReady", "False", "NoControlPlane" },
{ "applied, machines provisioning",
  { .applied = true, .has_controlplane = true, .desired = 3, .total = 3, .ready = 1,
    .observed = true, .applied_ms = 10 * MIN, .now_ms = 11 * MIN,
    .provision_timeout_ms = 30 * MIN },
  "Provisioning", "False", "NotAllReady", "False", "Unhealthy" },
{ "applied, not observed yet",
  { .applied = true, .has_controlplane = true, .desired = 3, .total = 3 },
  "Provisioning", "False", "NotAllReady", "Unknown", "NotObserved" },
{ "every machine ready, control plane healthy",
  { .applied = true, .has_controlplane = true, .desired = 3, .total = 3, .ready = 3,
    .observed = true, .cp_healthy = true, .was = "Provisioning" },
  "Ready", "True", "AllReady", "True", "Healthy" },
{ "all ready but the control plane is not healthy, never Ready before",
  { .applied = true, .has_controlplane = true, .desired = 3, .total = 3, .ready = 3,
    .observed = true, .was = "Provisioning" },
  "Provisioning", "True", "AllReady", "False", "Unhealthy" },
{ "one machine lost after Ready",
  { .applied = true, .has_controlplane = true, .desired = 3, .total = 3, .ready = 2,
    .lost = 1, .observed = true, .cp_healthy = true, .was = "Ready" },
  "Degraded", "False", "MachinesLost", "True", "Healthy" },
{ "the control plane lost after Ready",
  { .applied = true, .has_controlplane = true, .desired = 3, .total = 3, .ready = 3,
    .observed = true, .was = "Ready" },
  "Degraded", "True", "AllReady", "False", "Unhealthy" },
{ "scaled up after Ready: new machines on their way",
  { .applied = true, .has_controlplane = true, .desired = 4, .total = 4, .ready = 3,
    .observed = true, .cp_healthy = true, .was = "Ready" },
  "Provisioning", "False", "NotAllReady", "True", "Healthy" },
{ "Degraded recovers",
  { .applied = true, .has_controlplane = true, .desired = 3, .total = 3, .ready = 3,
    .observed = true, .cp_healthy = true, .was = "Degraded" },
  "Ready", "True", "AllReady", "True", "Healthy" },
{ "the last run failed",
  { .applied = true, .run_failed = true, .has_controlplane = true, .desired = 3,
    .total = 3, .ready = 3, .observed = true, .cp_healthy = true, .was = "Ready" },
  "Failed", "True", "AllReady", "True", "Healthy" },
{ "the first run failed",
  { .run_failed = true, .has_controlplane = true, .desired = 1 },
  "Failed", "False", "NotAllReady", "Unknown", "NotObserved" },
{ "provisioning did not converge in time",
  { .applied = true, .has_controlplane = true, .desired = 3, .total = 3, .ready = 1,
    .observed = true, .applied_ms = 10 * MIN, .now_ms = 41 * MIN,
    .provision_timeout_ms = 30 * MIN },
  "Failed", "False", "ProvisioningTimedOut", "False", "Unhealthy" },
{ "a run awaiting approval leaves the phase as observed",
  { .applied = true, .has_controlplane = true, .desired = 3, .total = 3, .ready = 3,
    .observed = true, .cp_healthy = true, .was = "Ready" },
  "Ready", "True", "AllReady", "True", "Healthy" },
{ "deleting wins over everything",
  { .deleting = true, .run_failed = true, .applied = true, .has_controlplane = true,
    .desired = 3, .total = 3, .ready = 3, .observed = true, .cp_healthy = true,
    .was = "Ready" },
  "Deleting", "True", "AllReady", "True", "Healthy" },
{ "machines missing from the state",
  { .applied = true, .has_controlplane = true, .desired = 3, .total = 2, .ready = 2,
    .observed = true, .cp_healthy = true, .was = "Provisioning" },
  "Provisioning", "False", "NotAllReady", "True", "Healthy" },
	/* clang-format on */
};

START_TEST(test_phase_table)
{
	const struct phase_case *c = &cases[_i];
	rz_phase_out_t out;

	rz_report_phase(&c->in, &out);
	ck_assert_msg(strcmp(out.phase, c->phase) == 0, "%s: phase %s, want %s", c->what, out.phase,
	              c->phase);
	ck_assert_msg(strcmp(out.machines_ready, c->machines) == 0 &&
	                  strcmp(out.machines_reason, c->machines_reason) == 0,
	              "%s: MachinesReady %s/%s, want %s/%s", c->what, out.machines_ready,
	              out.machines_reason, c->machines, c->machines_reason);
	ck_assert_msg(strcmp(out.cp_ready, c->cp) == 0 && strcmp(out.cp_reason, c->cp_reason) == 0,
	              "%s: ControlPlaneReady %s/%s, want %s/%s", c->what, out.cp_ready,
	              out.cp_reason, c->cp, c->cp_reason);
}
END_TEST

START_TEST(test_messages)
{
	rz_phase_in_t in = { .applied = true,
		             .has_controlplane = true,
		             .desired = 3,
		             .total = 3,
		             .ready = 1,
		             .observed = true,
		             .cp_error = "etcd: 1 of 3 members healthy",
		             .applied_ms = 0,
		             .now_ms = 5 };
	rz_phase_out_t out;

	rz_report_phase(&in, &out);
	ck_assert_str_eq(out.machines_message, "1 of 3 machines ready");
	ck_assert_str_eq(out.cp_message, "etcd: 1 of 3 members healthy");
	in.applied_ms = 1000;
	in.now_ms = 1000 + 31 * MIN;
	in.provision_timeout_ms = 30 * MIN;
	rz_report_phase(&in, &out);
	ck_assert_str_eq(out.machines_message,
	                 "1 of 3 machines ready 1860s after the apply (observe.provision_timeout)");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("phase");

	tcase_add_loop_test(tc, test_phase_table, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, test_messages);
	suite_add_tcase(s, tc);
	return rzt_run(s);
}
