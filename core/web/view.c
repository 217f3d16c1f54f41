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
	static const char *const ok[] = { "Ready",     "Running", "Succeeded", "Complete",
		                          "Completed", "Healthy", "AllReady",  "Available",
		                          "Applied",   "True",    "Enabled",   "Active",
		                          NULL };
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

/* The tone of a word none of the lists has, from its last words: "RunAwaitingApproval" as
 * "AwaitingApproval", "MachineUpgradeFailed" as "Failed" (an Event's reason is a thing and
 * what became of it), so that one meaning has one colour everywhere. */
static const char *tone_of_tail(const char *word)
{
	for (const char *s = word + 1; *s != '\0'; s++) {
		if (*s >= 'A' && *s <= 'Z' && s[-1] >= 'a' && s[-1] <= 'z') {
			const char *t = rz__tone(s);
			if (strcmp(t, "neutral") != 0) {
				return t;
			}
		}
	}
	return "neutral";
}

const char *rz__tone_any(const char *word)
{
	const char *t = rz__tone(word);

	return strcmp(t, "neutral") != 0 || word == NULL ? t : tone_of_tail(word);
}

static bool upper(char c)
{
	return c >= 'A' && c <= 'Z';
}

static bool lower(char c)
{
	return c >= 'a' && c <= 'z';
}

/* Where the word at s (in word) begins: after a small letter or digit, or at the last
 * capital of a run that a small letter follows ("APIToken": "API", "Token"). */
static bool word_starts(const char *word, const char *s)
{
	return s != word && upper(*s) &&
	       (lower(s[-1]) || (s[-1] >= '0' && s[-1] <= '9') || (upper(s[-1]) && lower(s[1])));
}

void rz__words_into(const char *word, char *out, size_t size)
{
	size_t o = 0;
	bool first = true;

	if (size == 0) {
		return;
	}
	word = word ? word : "";
	for (const char *s = word; *s != '\0' && o + 2 < size;) {
		const char *e = s + 1;
		size_t caps = upper(*s) ? 1 : 0, n;
		while (*e != '\0' && *e != ' ' && !word_starts(word, e)) {
			caps += upper(*e) ? 1 : 0;
			e++;
		}
		n = (size_t)(e - s);
		if (s != word && word_starts(word, s)) {
			out[o++] = ' ';
		}
		for (size_t i = 0; i < n && o + 1 < size; i++) {
			/* a word's capital is small but the first word's; an acronym keeps its own
			 */
			bool acronym = caps == n && n >= 2;
			out[o++] = i == 0 && !first && !acronym && upper(s[0])
			               ? (char)(s[0] - 'A' + 'a')
			               : s[i];
		}
		first = false;
		s = e;
	}
	out[o] = '\0';
}

json_t *rz__words(const char *word)
{
	char buf[160];

	rz__words_into(word, buf, sizeof(buf));
	return json_string(buf);
}

json_t *rz__badge(const char *word)
{
	char buf[160];

	rz__words_into(word, buf, sizeof(buf));
	return json_pack("{s:s, s:s}", "text", buf, "tone", rz__tone_any(word));
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
