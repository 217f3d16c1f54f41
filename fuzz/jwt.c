/*
 * fuzz/jwt.c - JWT parsing on every authenticated request (Authorization: Bearer ...), and
 * the Basic form tofu's http backend sends.
 *
 * Input: byte 0 picks the form: 0 the rest is a bearer credential, 1 a Basic one, 2 the
 * rest is XORed over a session freshly issued for user "fuzzer" (viewer), so the fuzzer
 * works near valid signatures. Invariant: whatever authenticates is that session's user
 * with that role or less — nothing the fuzzer can write is anyone else, or more.
 */
#include <config.h>

#include "fuzz/env.h"
#include "core/auth/auth.h"
#include "core/base/config.h"

static rz_config_t cfg;
static rz_auth_t *auth;
static char *session;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rz_principal_t p;
	rz_err_t err = { 0 };
	char *header;
	size_t n;

	if (size < 1) {
		return 0;
	}
	n = size - 1 + strlen(session) + 8;
	header = calloc(1, n);
	FZ_ASSERT(header != NULL, "out of memory");
	if (data[0] % 3 == 2) {
		snprintf(header, n, "Bearer %s", session);
		for (size_t i = 1; i < size && 7 + i - 1 < strlen(header); i++) {
			header[7 + i - 1] ^= (char)data[i];
		}
	} else {
		snprintf(header, n, "%s ", data[0] % 3 ? "Basic" : "Bearer");
		memcpy(header + strlen(header), data + 1, size - 1);
	}
	memset(&p, 0, sizeof(p));
	if (rz_auth_authenticate(auth, header, &p, &err) == 0) {
		FZ_ASSERT(strcmp(p.user, "fuzzer") == 0 && p.role <= RZ_ROLE_VIEW,
		          "'%s' authenticated as '%s' (role %d)", header, p.user, p.role);
	}
	free(header);
	return 0;
}

static void cleanup(void)
{
	free(session);
	rz_auth_free(auth);
	rz_config_free(&cfg);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	rz_principal_t p;
	rz_err_t err = { 0 };

	fz_env();
	fz_create("User", "{\"metadata\":{\"name\":\"fuzzer\"},\"spec\":{\"role\":\"view\"}}");
	FZ_ASSERT(rz_config_defaults(&cfg) == 0, "defaults");
	free(cfg.data_dir);
	cfg.data_dir = strdup(fz_dir);
	FZ_ASSERT(rz_auth_new(&auth, &cfg, fz_db, fz_store, fz_bus, &err) == 0, "auth: %s",
	          err.msg);
	FZ_ASSERT(rz_auth_issue(auth, "fuzzer", RZ_ROLE_VIEW, &session, &p, &err) == 0, "issue: %s",
	          err.msg);
	FZ_ASSERT(rz_auth_authenticate(auth, NULL, &p, &err) != 0, "no header authenticated");
	atexit(cleanup);
	return 0;
}
