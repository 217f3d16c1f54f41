/* core/web/tokens.c - what a user's page (core/web/user-pages.c) and My account
 * (core/web/account-pages.c) share about API tokens: a new token's spec from the form (its
 * expiry a lifetime or a date), a token's row, and its secret kept in memory for its one
 * showing. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "core/base/clock.h"
#include "core/model/fields.h"
#include "core/web/page.h"

#define SHOWN_MAX 16  /* new tokens' secrets waiting for their one showing */
#define SHOWN_AGE 300 /* seconds a secret waits for it */

json_t *rz__token_spec(rz__page_t *pg)
{
	json_t *spec = json_object();

	if (rz__form(pg, "tokenRole")[0] != '\0') {
		json_object_set_new(spec, "role", json_string(rz__form(pg, "tokenRole")));
	}
	if (rz__form(pg, "description")[0] != '\0') {
		json_object_set_new(spec, "description", json_string(rz__form(pg, "description")));
	}
	if (!rz__token_expiry(pg, spec)) {
		json_decref(spec);
		return NULL;
	}
	return spec;
}

/* ------------------------------------------------------------------ a secret shown once */

/* A new token's secret, kept in memory from its creation until the session that created it
 * reads it once (the page after the redirect), or SHOWN_AGE seconds. Never in a URL. */
static struct shown {
	char jti[40];
	char user[64];
	char id[64];
	char secret[RZ_TOKEN_SECRET_LEN + 1];
	time_t at;
} shown[SHOWN_MAX];

static void shown_clear(struct shown *s)
{
	sodium_memzero(s, sizeof(*s));
}

static void shown_expire(void)
{
	time_t now = time(NULL);

	for (size_t i = 0; i < SHOWN_MAX; i++) {
		if (shown[i].jti[0] != '\0' && now - shown[i].at > SHOWN_AGE) {
			shown_clear(&shown[i]);
		}
	}
}

void rz__token_shown_put(const char *jti, const char *user, const char *id, const char *secret)
{
	struct shown *s = &shown[0];

	shown_expire();
	for (size_t i = 0; i < SHOWN_MAX; i++) {
		if (shown[i].jti[0] == '\0' || shown[i].at < s->at) {
			s = &shown[i];
			if (s->jti[0] == '\0') {
				break;
			}
		}
	}
	shown_clear(s); /* full: the oldest one is never shown */
	snprintf(s->jti, sizeof(s->jti), "%s", jti);
	snprintf(s->user, sizeof(s->user), "%s", user);
	snprintf(s->id, sizeof(s->id), "%s", id);
	snprintf(s->secret, sizeof(s->secret), "%s", secret);
	s->at = time(NULL);
}

/* Take the secret (copied into out, "" when none): it is forgotten as it is read. */
void rz__token_shown_take(const char *jti, const char *user, const char *id,
                          char out[RZ_TOKEN_SECRET_LEN + 1])
{
	out[0] = '\0';
	shown_expire();
	for (size_t i = 0; i < SHOWN_MAX; i++) {
		if (shown[i].jti[0] != '\0' && strcmp(shown[i].jti, jti) == 0 &&
		    strcmp(shown[i].user, user) == 0 && strcmp(shown[i].id, id) == 0) {
			memcpy(out, shown[i].secret, sizeof(shown[i].secret));
			shown_clear(&shown[i]);
		}
	}
}

void rz__admin_forget(void)
{
	for (size_t i = 0; i < SHOWN_MAX; i++) {
		shown_clear(&shown[i]);
	}
}

/* ------------------------------------------------------------------ the form */

/* The token form's fields (core/web/form.c), on a user's page and on My account alike. */
static const rz__field_t token_fields[] = {
	{ "spec.description", "spec_description", "Description", "t-description" },
	{ "spec.role", "spec_role", "Role", "t-role" },
	{ "spec.expiresAt", "spec_expiresAt", "Expiry", "t-expires-on" },
};

bool rz__token_failed(rz__page_t *pg, int code, const json_t *status)
{
	return rz__form_failed(pg, code, status, token_fields,
	                       sizeof(token_fields) / sizeof(token_fields[0]));
}

/* The form's expiry refused here: beside the field, once, as the API's would be; anchor:
 * the control at fault. */
static bool expiry_refused(rz__page_t *pg, const char *anchor, const char *why)
{
	rz__form_view(pg);
	rz__form_problem_at(pg, "spec_expiresAt", anchor, "Expiry", why);
	pg->code = 422;
	return false;
}

/* A token's lifetimes offered: the form's value, its label, seconds (0: never). */
static const struct expiry {
	const char *value, *label;
	long long seconds;
} expiries[] = {
	{ "1h", "1 hour", 3600LL },         { "1d", "1 day", 86400LL },
	{ "7d", "7 days", 7 * 86400LL },    { "30d", "30 days", 30 * 86400LL },
	{ "90d", "90 days", 90 * 86400LL }, { "never", "never", 0 },
};

json_t *rz__token_expiries(const char *want)
{
	json_t *out = json_array();

	for (size_t i = 0; i < sizeof(expiries) / sizeof(expiries[0]); i++) {
		json_array_append_new(out, json_pack("{s:s, s:s, s:b}", "value", expiries[i].value,
		                                     "label", expiries[i].label, "selected",
		                                     strcmp(expiries[i].value, want) == 0));
	}
	return out;
}

/* A token's expiry from the form into spec.expiresAt (RFC 3339): a date (expiresOn,
 * YYYY-MM-DD, at 00:00 UTC) or else a lifetime from now (expiresIn). False when the form's
 * value is refused here (its cause set beside the field, 422); a date the API finds invalid
 * is refused by the API with its own cause. */
bool rz__token_expiry(rz__page_t *pg, json_t *spec)
{
	const char *on = rz__form(pg, "expiresOn"), *in = rz__form(pg, "expiresIn");
	char at[64];
	int64_t t;

	if (on[0] != '\0') {
		if (strlen(on) != 10) {
			return expiry_refused(pg, "t-expires-on",
			                      "Must be a date such as 2027-01-31.");
		}
		snprintf(at, sizeof(at), "%sT00:00:00Z", on);
		t = rz_time_parse(at);
		if (t >= 0 && t <= rz_clock_now_ms() / 1000) {
			return expiry_refused(
			    pg, "t-expires-on",
			    "The date is not in the future: the token would never "
			    "work.");
		}
		json_object_set_new(spec, "expiresAt", json_string(at)); /* the API checks it */
		return true;
	}
	for (size_t i = 0; i < sizeof(expiries) / sizeof(expiries[0]); i++) {
		if (strcmp(in[0] ? in : RZ__TOKEN_EXPIRY_DEFAULT, expiries[i].value) == 0) {
			if (expiries[i].seconds > 0) {
				rz_clock_format((rz_clock_now_ms() / 1000 + expiries[i].seconds) *
				                    1000,
				                at, sizeof(at));
				json_object_set_new(spec, "expiresAt", json_string(at));
			}
			return true;
		}
	}
	return expiry_refused(pg, "t-expires-in", "Must be one of 1 hour to 90 days, or never.");
}

json_t *rz__token_row(const json_t *t)
{
	const char *exp = rz__str(t, "spec.expiresAt"), *used = rz__str(t, "status.lastUsed");
	int64_t at = exp[0] ? rz_time_parse(exp) : -1;
	bool expired = at >= 0 && at <= rz_clock_now_ms() / 1000;

	return json_pack("{s:s, s:s, s:s, s:o, s:o, s:o, s:b, s:{s:s, s:s}}", "id",
	                 rz__str(t, "metadata.name"), "role", rz__str(t, "spec.role"),
	                 "description", rz__str(t, "spec.description"), "created",
	                 rz__when(rz__str(t, "metadata.creationTimestamp")), "expires",
	                 rz__when(exp[0] ? exp : NULL), "lastUsed", rz__when(used[0] ? used : NULL),
	                 "expired", expired, "state", "text", expired ? "Expired" : "Active",
	                 "tone", expired ? "bad" : "ok");
}
