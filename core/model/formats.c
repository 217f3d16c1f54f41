/*
 * core/model/formats.c - the format checks of the field schemas (core/model/fields.h,
 * "formats"): DNS names, label keys and values, CIDRs, versions, URLs, YAML. Each is true
 * for a valid string, else writes a reason for a person into msg.
 */
/* Angle brackets: a quoted "config.h" would find core/base/config.h next to this file. */
#include <config.h>

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "core/base/config.h"
#include "core/base/yaml.h"

#include "core/model/fields.h"

static bool fail(char *msg, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bool fail(char *msg, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (msg != NULL && size > 0) {
		va_start(ap, fmt);
		vsnprintf(msg, size, fmt, ap);
		va_end(ap);
	}
	return false;
}

static bool is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

static bool is_lower_alnum(char ch)
{
	return is_digit(ch) || (ch >= 'a' && ch <= 'z');
}

static bool is_alnum(char ch)
{
	return is_lower_alnum(ch) || (ch >= 'A' && ch <= 'Z');
}

/* s[0..n): alphanumeric ends, alphanumerics and '-' inside; upper case only when upper. */
static bool dns_label(const char *s, size_t n, bool upper)
{
	bool (*alnum)(char) = upper ? is_alnum : is_lower_alnum;
	size_t i;

	if (n == 0 || !alnum(s[0]) || !alnum(s[n - 1])) {
		return false;
	}
	for (i = 1; i + 1 < n; i++) {
		if (!alnum(s[i]) && s[i] != '-') {
			return false;
		}
	}
	return true;
}

/* s[0..n): one or more dns_labels of at most label_max bytes joined by '.'. */
static bool dns_name(const char *s, size_t n, bool upper, size_t label_max)
{
	size_t start = 0, i;

	for (i = 0; i <= n; i++) {
		if (i < n && s[i] != '.') {
			continue;
		}
		if (i - start > label_max || !dns_label(s + start, i - start, upper)) {
			return false;
		}
		start = i + 1;
	}
	return true;
}

/* s[0..n): alphanumeric ends, alphanumerics, '-', '_' and '.' inside. */
static bool name_part(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || !is_alnum(s[0]) || !is_alnum(s[n - 1])) {
		return false;
	}
	for (i = 1; i + 1 < n; i++) {
		if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.') {
			return false;
		}
	}
	return true;
}

/* s[0..n) is a decimal of 1..maxdigits digits without leading zeros. out may be NULL. */
static bool parse_dec(const char *s, size_t n, size_t maxdigits, unsigned long *out)
{
	unsigned long v = 0;
	size_t i;

	if (n == 0 || n > maxdigits || (n > 1 && s[0] == '0')) {
		return false;
	}
	for (i = 0; i < n; i++) {
		if (!is_digit(s[i])) {
			return false;
		}
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (out != NULL) {
		*out = v;
	}
	return true;
}

/* s[0..n) is a dotted quad without leading zeros. */
static bool parse_ipv4(const char *s, size_t n, unsigned char out[4])
{
	size_t i = 0, k;

	for (k = 0; k < 4; k++) {
		size_t start;
		unsigned long v;

		if (k > 0) {
			if (i >= n || s[i] != '.') {
				return false;
			}
			i++;
		}
		start = i;
		while (i < n && is_digit(s[i])) {
			i++;
		}
		if (!parse_dec(s + start, i - start, 3, &v) || v > 255) {
			return false;
		}
		out[k] = (unsigned char)v;
	}
	return i == n;
}

/* s[0..n) is an IPv6 address (inet_pton). */
static bool parse_ipv6(const char *s, size_t n, unsigned char out[16])
{
	char text[INET6_ADDRSTRLEN];

	if (n >= sizeof(text)) {
		return false;
	}
	memcpy(text, s, n);
	text[n] = '\0';
	return inet_pton(AF_INET6, text, out) == 1;
}

bool rz_format_dns1123_label(const char *s, char *msg, size_t size)
{
	size_t n = strlen(s);

	if (n == 0) {
		return fail(msg, size, "must not be empty");
	}
	if (n > 63) {
		return fail(msg, size, "must be no more than 63 characters");
	}
	if (!dns_label(s, n, false)) {
		return fail(msg, size,
		            "must consist of lower case alphanumeric characters or '-', and must "
		            "start and end with an alphanumeric character (e.g. 'my-name' or "
		            "'123-abc')");
	}
	return true;
}

bool rz_format_dns1123_subdomain(const char *s, char *msg, size_t size)
{
	size_t n = strlen(s);

	if (n == 0) {
		return fail(msg, size, "must not be empty");
	}
	if (n > 253) {
		return fail(msg, size, "must be no more than 253 characters");
	}
	if (!dns_name(s, n, false, SIZE_MAX)) {
		return fail(
		    msg, size,
		    "must consist of lower case alphanumeric characters, '-' or '.', and "
		    "must start and end with an alphanumeric character (e.g. 'example.com')");
	}
	return true;
}

static bool check_prefix(const char *s, size_t n, char *msg, size_t size)
{
	if (n == 0) {
		return fail(msg, size, "prefix part must be non-empty");
	}
	if (n > 253) {
		return fail(msg, size, "prefix part must be no more than 253 characters");
	}
	if (!dns_name(s, n, false, SIZE_MAX)) {
		return fail(msg, size, "prefix part must be a lowercase RFC 1123 subdomain");
	}
	return true;
}

bool rz_format_label_key(const char *s, char *msg, size_t size)
{
	const char *slash = strchr(s, '/');
	const char *name = s;
	size_t n;

	if (slash != NULL) {
		if (strchr(slash + 1, '/') != NULL) {
			return fail(msg, size,
			            "must be a name with an optional DNS subdomain prefix and '/' "
			            "(e.g. 'example.com/MyName')");
		}
		if (!check_prefix(s, (size_t)(slash - s), msg, size)) {
			return false;
		}
		name = slash + 1;
	}
	n = strlen(name);
	if (n == 0) {
		return fail(msg, size, "name part must be non-empty");
	}
	if (n > 63) {
		return fail(msg, size, "name part must be 63 characters or less");
	}
	if (!name_part(name, n)) {
		return fail(msg, size,
		            "name part must consist of alphanumeric characters, '-', '_' or '.', "
		            "and must start and end with an alphanumeric character");
	}
	return true;
}

bool rz_format_qualified_name(const char *s, char *msg, size_t size)
{
	return rz_format_label_key(s, msg, size);
}

bool rz_format_label_value(const char *s, char *msg, size_t size)
{
	size_t n = strlen(s);

	if (n > 63) {
		return fail(msg, size, "must be no more than 63 characters");
	}
	if (n > 0 && !name_part(s, n)) {
		return fail(msg, size,
		            "must be empty or consist of alphanumeric characters, '-', '_' or '.', "
		            "and must start and end with an alphanumeric character");
	}
	return true;
}

/* Clears the host bits of addr; false with "did you mean" when any was set. */
static bool host_bits_zero(unsigned char *addr, size_t bytes, unsigned bits, char *msg, size_t size)
{
	char text[INET6_ADDRSTRLEN];
	bool clean = true;
	size_t i;

	for (i = 0; i < bytes; i++) {
		unsigned keep = bits >= (i + 1) * 8 ? 8 : bits > i * 8 ? bits - (unsigned)i * 8 : 0;
		unsigned mask = keep == 0 ? 0 : (0xffu << (8 - keep)) & 0xffu;

		if ((addr[i] & ~mask) != 0) {
			clean = false;
			addr[i] = (unsigned char)(addr[i] & mask);
		}
	}
	if (clean) {
		return true;
	}
	if (inet_ntop(bytes == 4 ? AF_INET : AF_INET6, addr, text, sizeof(text)) == NULL) {
		return fail(msg, size, "host bits must be zero");
	}
	return fail(msg, size, "host bits must be zero (did you mean %s/%u?)", text, bits);
}

bool rz_format_cidr(const char *s, char *msg, size_t size)
{
	static const char generic[] = "must be a CIDR such as 10.244.0.0/16";
	const char *slash = strchr(s, '/');
	unsigned char addr[16];
	unsigned long bits;
	size_t alen, bytes;

	if (slash == NULL) {
		return fail(msg, size, "%s", generic);
	}
	alen = (size_t)(slash - s);
	if (memchr(s, ':', alen) != NULL) {
		bytes = 16;
		if (!parse_ipv6(s, alen, addr)) {
			return fail(msg, size, "%s", generic);
		}
	} else {
		bytes = 4;
		if (!parse_ipv4(s, alen, addr)) {
			return fail(msg, size, "%s", generic);
		}
	}
	if (!parse_dec(slash + 1, strlen(slash + 1), 3, &bits)) {
		return fail(msg, size, "%s", generic);
	}
	if (bits > bytes * 8) {
		return fail(msg, size, "prefix length must be between 0 and %zu", bytes * 8);
	}
	return host_bits_zero(addr, bytes, (unsigned)bits, msg, size);
}

bool rz_format_version(const char *s, char *msg, size_t size)
{
	const char *p = s;
	int k;

	for (k = 0; k < 3; k++) {
		size_t n = 0;

		if (k > 0) {
			if (*p != '.') {
				return fail(msg, size, "must be a version such as 1.35.0");
			}
			p++;
		}
		while (is_digit(p[n])) {
			n++;
		}
		if (!parse_dec(p, n, 9, NULL)) {
			return fail(msg, size, "must be a version such as 1.35.0");
		}
		p += n;
	}
	if (*p != '\0') {
		return fail(msg, size, "must be a version such as 1.35.0");
	}
	return true;
}

/* The host at p (before end): [IPv6], a dotted quad, or a DNS name. Returns the end of the
 * host, or NULL when it is not one. */
static const char *url_host(const char *p, const char *end)
{
	unsigned char addr[16];
	const char *q;

	if (*p == '[') {
		q = memchr(p, ']', (size_t)(end - p));
		if (q == NULL || !parse_ipv6(p + 1, (size_t)(q - p - 1), addr)) {
			return NULL;
		}
		return q + 1;
	}
	q = memchr(p, ':', (size_t)(end - p));
	if (q == NULL) {
		q = end;
	}
	if (strspn(p, "0123456789.") >= (size_t)(q - p)) {
		return parse_ipv4(p, (size_t)(q - p), addr) ? q : NULL;
	}
	if (q - p > 253 || !dns_name(p, (size_t)(q - p), true, 63)) {
		return NULL;
	}
	return q;
}

bool rz_format_url(const char *s, char *msg, size_t size)
{
	static const char generic[] = "must be a URL such as https://10.0.0.10:6443";
	const unsigned char *u;
	const char *p, *end;
	size_t digits;

	for (u = (const unsigned char *)s; *u != '\0'; u++) {
		if (*u <= 0x20 || *u == 0x7f) {
			return fail(msg, size, "must not contain spaces or control characters");
		}
		if (*u >= 0x80) {
			return fail(msg, size, "%s", generic);
		}
	}
	if (strncmp(s, "https://", 8) == 0) {
		p = s + 8;
	} else if (strncmp(s, "http://", 7) == 0) {
		p = s + 7;
	} else {
		return fail(msg, size, "%s", generic);
	}
	end = p + strcspn(p, "/");
	if (memchr(p, '@', (size_t)(end - p)) != NULL) {
		return fail(msg, size, "must not contain a user name or password");
	}
	p = url_host(p, end);
	if (p == NULL || (p < end && *p != ':')) {
		return fail(msg, size, "%s", generic);
	}
	if (p == end) {
		return true;
	}
	digits = strspn(p + 1, "0123456789");
	if (digits == 0 || p + 1 + digits != end) {
		return fail(msg, size, "%s", generic);
	}
	if (digits > 5 || strtoul(p + 1, NULL, 10) < 1 || strtoul(p + 1, NULL, 10) > 65535) {
		return fail(msg, size, "port must be between 1 and 65535");
	}
	return true;
}

/* 1-based line and column of byte offset in s (for reader errors, which carry no mark). */
static void offset_position(const char *s, size_t offset, size_t *line, size_t *col)
{
	size_t i;

	*line = 1;
	*col = 1;
	for (i = 0; i < offset && s[i] != '\0'; i++) {
		if (s[i] == '\n') {
			(*line)++;
			*col = 1;
		} else if (((unsigned char)s[i] & 0xc0) != 0x80) {
			(*col)++;
		}
	}
}

static bool yaml_problem(const yaml_parser_t *parser, const char *s, char *msg, size_t size)
{
	size_t line, col;

	if (parser->problem == NULL) {
		return fail(msg, size, "not valid YAML: out of memory");
	}
	if (parser->error == YAML_READER_ERROR) {
		offset_position(s, parser->problem_offset, &line, &col);
	} else {
		line = parser->problem_mark.line + 1;
		col = parser->problem_mark.column + 1;
	}
	return fail(msg, size, "not valid YAML: %s at line %zu, column %zu", parser->problem, line,
	            col);
}

bool rz_format_yaml(const char *s, char *msg, size_t size)
{
	yaml_parser_t parser;
	yaml_event_t event;
	bool ok = true, done = false;
	int depth = 0;

	if (!yaml_parser_initialize(&parser)) {
		return fail(msg, size, "not valid YAML: out of memory");
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)s, strlen(s));
	while (!done) {
		if (!yaml_parser_parse(&parser, &event)) {
			ok = yaml_problem(&parser, s, msg, size);
			break;
		}
		done = event.type == YAML_STREAM_END_EVENT;
		if (event.type == YAML_SEQUENCE_START_EVENT ||
		    event.type == YAML_MAPPING_START_EVENT) {
			if (++depth > RZ_YAML_MAX_DEPTH) { /* stop before libyaml's cost grows */
				ok = fail(
				    msg, size,
				    "not valid YAML here: nested deeper than %d levels at line %zu",
				    RZ_YAML_MAX_DEPTH, (size_t)event.start_mark.line + 1);
				done = true;
			}
		} else if (event.type == YAML_SEQUENCE_END_EVENT ||
		           event.type == YAML_MAPPING_END_EVENT) {
			depth--;
		}
		yaml_event_delete(&event);
	}
	yaml_parser_delete(&parser);
	return ok;
}

bool rz_format_duration(const char *s, char *msg, size_t size)
{
	int64_t ms;

	if (rz_parse_duration(s, &ms) != 0 || ms < 0) {
		return fail(msg, size, "must be a duration such as 30m, 6h or 1d (0: off)");
	}
	return true;
}
