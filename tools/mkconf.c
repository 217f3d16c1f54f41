/*
 * tools/mkconf.c - writes the installed rezus.conf from the settings table
 * (core/base/settings.c), so the file shipped in the packages lists every key with its
 * default and help and cannot drift from what the daemon reads. Every section is left
 * open and every key commented out with its default: the file means the defaults until
 * a line is uncommented. The plugins named on the command line are loaded.
 *
 * Usage: mkconf [-o FILE] [PLUGIN...]
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/settings.h"

#define WRAP 88 /* columns of a help comment at most */

static int depth_of(const char *key)
{
	int d = 0;

	for (const char *p = key; *p != '\0'; p++) {
		d += *p == '.';
	}
	return d;
}

static const char *leaf_of(const char *key)
{
	const char *dot = strrchr(key, '.');

	return dot != NULL ? dot + 1 : key;
}

/* The help text as "# " comment lines at indent, wrapped at word boundaries. */
static void comment(FILE *f, int indent, const char *text)
{
	const char *p = text;
	int width = WRAP - indent - 2;

	while (*p != '\0') {
		int n = (int)strlen(p);

		if (n > width) {
			n = width;
			while (n > 0 && p[n] != ' ') {
				n--;
			}
			if (n == 0) {
				n = (int)strcspn(p, " ");
			}
		}
		fprintf(f, "%*s# %.*s\n", indent, "", n, p);
		p += n;
		while (*p == ' ') {
			p++;
		}
	}
}

/* A default as YAML would read it back: "" and text YAML would misread are quoted. */
static void value(FILE *f, const struct rz__setting *s)
{
	const char *v = s->def != NULL ? s->def : "";

	if (s->kind == K_LIST) {
		fprintf(f, "[%s]", v);
	} else if (v[0] == '\0' || strpbrk(v, "#{}[],&*!|>'\"%@`") != NULL ||
	           strstr(v, ": ") != NULL) {
		fprintf(f, "\"%s\"", v);
	} else {
		fputs(v, f);
	}
}

static void env_name(FILE *f, const char *key)
{
	fputs("REZUSCLOUD_", f);
	for (const char *p = key; *p != '\0'; p++) {
		fputc(*p == '.' ? '_' : (*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p), f);
	}
}

static void setting(FILE *f, const struct rz__setting *s, int argc, char **argv)
{
	int indent = 2 * depth_of(s->key);
	char extra[160];

	if (s->kind == K_SECTION) {
		fprintf(f, "\n");
		comment(f, indent, s->help);
		fprintf(f, "%*s%s:\n", indent, "", leaf_of(s->key));
		return;
	}
	if (s->kind == K_PLUGINS) {
		fprintf(f, "\n");
		comment(f, indent, s->help);
		comment(f, indent,
		        "A plugin is loaded when it is listed here; its section holds its own "
		        "settings (each plugin's README), and required: false lets the daemon "
		        "start without it.");
		fprintf(f, "%*s%s:%s\n", indent, "", leaf_of(s->key), argc > 0 ? "" : " {}");
		for (int i = 0; i < argc; i++) {
			fprintf(f, "%*s  %s: {}\n", indent, "", argv[i]);
		}
		return;
	}
	comment(f, indent, s->help);
	extra[0] = '\0';
	if (s->kind == K_INT) {
		snprintf(extra, sizeof(extra), "%lld to %lld; ", (long long)s->min,
		         (long long)s->max);
	}
	fprintf(f, "%*s# (%s", indent, "", extra);
	if (s->env_alias != NULL) {
		fprintf(f, "environment %s or ", s->env_alias);
	} else {
		fprintf(f, "environment ");
	}
	env_name(f, s->key);
	fprintf(f, ")\n%*s#%s: ", indent, "", leaf_of(s->key));
	value(f, s);
	fprintf(f, "\n");
}

int main(int argc, char **argv)
{
	FILE *f = stdout;
	int first = 1;

	if (argc > 2 && strcmp(argv[1], "-o") == 0) {
		f = fopen(argv[2], "w");
		if (f == NULL) {
			perror(argv[2]);
			return 1;
		}
		first = 3;
	}
	fprintf(f, "# rezus.conf - the configuration of rezuscloud(8); rezus.conf(5) describes "
	           "every key.\n"
	           "#\n"
	           "# Every key is shown commented out with its default: uncomment a line to "
	           "change it.\n"
	           "# Precedence: built-in defaults < this file < REZUSCLOUD_* environment < "
	           "command line.\n"
	           "# Durations are written 5s, 30m, 24h; sizes 64KiB, 16MiB. Check a change "
	           "with\n"
	           "#   rezuscloud --check-config -c FILE\n"
	           "# before restarting the service.\n");
	for (size_t i = 0; i < rz__settings_n; i++) {
		setting(f, &rz__settings[i], argc - first, argv + first);
	}
	if (fflush(f) != 0 || ferror(f) || (f != stdout && fclose(f) != 0)) {
		perror("mkconf");
		return 1;
	}
	return 0;
}
