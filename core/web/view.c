/* core/web/view.c - the WebUI's visual language in view models: the tone of a phase, stage
 * or condition (its badge's colour, beside its text) and a time as the pages show it. */
#include <config.h>

#include <string.h>

#include <jansson.h>

#include "core/web/page.h"

static bool one_of(const char *word, const char *const *list)
{
	for (size_t i = 0; list[i] != NULL; i++) {
		if (strcmp(word, list[i]) == 0) {
			return true;
		}
	}
	return false;
}

const char *rz__tone(const char *word)
{
	static const char *const ok[] = { "Ready",   "Running",  "Succeeded", "Complete",
		                          "Healthy", "AllReady", "Available", "Applied",
		                          "True",    "Enabled",  "Active",    NULL };
	static const char *const busy[] = { "Pending",     "Provisioning",       "Queued",
		                            "Upgrading",   "Rebooting",          "Booting",
		                            "Installing",  "Prechecking",        "Verifying",
		                            "Deleting",    "RollingBack",        "Planning",
		                            "Applying",    "Restoring",          "InProgress",
		                            "Maintenance", "ShuttingDown",       "Resetting",
		                            "Removing",    "MachinesRestarting", "Stopping",
		                            NULL };
	static const char *const wait[] = {
		"AwaitingApproval", "Unknown",     "Skipped", "NotObserved",
		"Drifted",          "Interrupted", NULL
	};
	static const char *const bad[] = { "Failed",    "Degraded",     "False",      "Error",
		                           "Unhealthy", "MachinesLost", "RolledBack", "Lost",
		                           "Disabled",  "Expired",      NULL };

	if (word == NULL || word[0] == '\0') {
		return "neutral";
	}
	return one_of(word, ok)     ? "ok"
	       : one_of(word, busy) ? "busy"
	       : one_of(word, wait) ? "wait"
	       : one_of(word, bad)  ? "bad"
	                            : "neutral";
}

json_t *rz__badge(const char *word)
{
	return json_pack("{s:s, s:s}", "text", word != NULL ? word : "", "tone", rz__tone(word));
}

json_t *rz__when(const char *iso)
{
	char exact[40] = "";

	/* 2026-12-07T15:04:05.123Z: 2026-12-07 15:04:05 UTC (seconds are enough to read) */
	if (iso != NULL && strlen(iso) >= 19 && iso[10] == 'T') {
		snprintf(exact, sizeof(exact), "%.10s %.8s UTC", iso, iso + 11);
	} else if (iso != NULL) {
		snprintf(exact, sizeof(exact), "%s", iso);
	}
	return json_pack("{s:s, s:s}", "iso", iso != NULL ? iso : "", "exact", exact);
}
