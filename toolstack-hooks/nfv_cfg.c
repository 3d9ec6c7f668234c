/* SPDX-License-Identifier: BSD-3-Clause */
/* nfv_* keys of an xl domain config; see nfv_cfg.h. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxlutil.h>

#include "nfv_cfg.h"

static const char *const known[] = {
	"nfv_trust_group", "nfv_service", "nfv_instances", "nfv_backend",
};

/*
 * libxlutil has no way to list a config's keys, so unknown nfv_* keys are
 * found with a scan of the statements: "key = value" separated by newlines
 * or ';', '#' comments, quoted strings (which may hold ';' or '#').
 * Returns 0, or -1 with the first unknown key and its line in @p err.
 */
static int
scan_keys(const char *file, const char *p, size_t len, char *err,
	  size_t errlen)
{
	const char *end = p + len;
	int line = 1, at_start = 1;
	char q = 0;

	while (p < end) {
		char ch = *p;

		if (q) {			/* inside a string */
			if (ch == '\\' && p + 1 < end)
				p++;
			else if (ch == q)
				q = 0;
			else if (ch == '\n')
				line++;
			p++;
			continue;
		}
		if (ch == '#') {
			while (p < end && *p != '\n')
				p++;
			continue;
		}
		if (ch == '\n' || ch == ';') {
			line += ch == '\n';
			at_start = 1;
			p++;
			continue;
		}
		if (ch == '"' || ch == '\'') {
			q = ch;
			at_start = 0;
			p++;
			continue;
		}
		if (at_start && (isalpha((unsigned char)ch) || ch == '_')) {
			const char *k = p;
			size_t n, i;

			while (p < end && (isalnum((unsigned char)*p) ||
					   *p == '_'))
				p++;
			n = (size_t)(p - k);
			at_start = 0;
			if (n < 4 || strncmp(k, "nfv_", 4) != 0)
				continue;
			for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
				if (strlen(known[i]) == n &&
				    strncmp(known[i], k, n) == 0)
					break;
			if (i == sizeof(known) / sizeof(known[0])) {
				snprintf(err, errlen, "%s:%d: unknown key "
					 "'%.*s' (known: nfv_trust_group, "
					 "nfv_service, nfv_instances, "
					 "nfv_backend)", file,
					 line, (int)(n > 40 ? 40 : n), k);
				return -1;
			}
			continue;
		}
		if (!isspace((unsigned char)ch))
			at_start = 0;
		p++;
	}
	return 0;
}

static int
valid_name(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n >= NFV_NAME_LEN)
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("-_.", s[i]))
			return 0;
	return 1;
}

static int
get_name(XLU_Config *x, const char *file, const char *key, char *out,
	 char *err, size_t errlen)
{
	const char *v = NULL;
	int rc = xlu_cfg_get_string(x, key, &v, 1);

	if (rc == ESRCH) {
		snprintf(err, errlen, "%s: %s is missing (every NF domain "
			 "needs nfv_trust_group and nfv_service)", file, key);
		return -1;
	}
	if (rc != 0 || !valid_name(v)) {
		snprintf(err, errlen, "%s: %s must be a string of 1 to %u "
			 "letters, digits, '-', '_' or '.'", file, key,
			 NFV_NAME_LEN - 1);
		return -1;
	}
	snprintf(out, NFV_NAME_LEN, "%s", v);
	return 0;
}

/* nfv_backend: a domain name as xl takes it (no '/', which would make
 * a XenStore path of it); absent or "Domain-0": Dom0. */
static int
get_backend(XLU_Config *x, const char *file, char *out, size_t len,
	    char *err, size_t errlen)
{
	const char *v = NULL;
	int rc = xlu_cfg_get_string(x, "nfv_backend", &v, 1);
	size_t i, n;

	out[0] = '\0';
	if (rc == ESRCH)
		return 0;
	n = rc == 0 ? strlen(v) : len;
	for (i = 0; i < n && rc == 0; i++)
		if (!isgraph((unsigned char)v[i]) || v[i] == '/')
			rc = EINVAL;
	if (rc != 0 || n == 0 || n >= len) {
		snprintf(err, errlen, "%s: nfv_backend must be a domain name "
			 "of up to %zu characters, no blank or '/'", file,
			 len - 1);
		return -1;
	}
	if (strcmp(v, "Domain-0") != 0)
		snprintf(out, len, "%s", v);
	return 0;
}

int
nfv_cfg_parse(const char *file, const char *data, size_t len,
	      FILE *report, struct nfv_cfg *out, char *err, size_t errlen)
{
	XLU_Config *x;
	const char *name = NULL;
	long inst = 1;
	int rc;

	memset(out, 0, sizeof(*out));
	if (len > (1u << 20)) {
		snprintf(err, errlen, "%s: larger than 1 MiB", file);
		return -1;
	}
	/* libxlutil's lexer asserts (aborts) on a NUL inside a string:
	 * found by tests/fuzz/fuzz_nfv.c; xl itself would abort too. */
	if (memchr(data, '\0', len) != NULL) {
		snprintf(err, errlen, "%s: contains a NUL byte (not a text "
			 "file)", file);
		return -1;
	}
	if (scan_keys(file, data, len, err, errlen) < 0)
		return -1;
	/* libxlutil prints its own parse errors to @p report. */
	x = xlu_cfg_init(report, file);
	if (x == NULL) {
		snprintf(err, errlen, "%s: out of memory", file);
		return -1;
	}
	rc = xlu_cfg_readdata(x, data, (int)len);
	if (rc != 0) {
		snprintf(err, errlen, "%s: not a valid xl config (%s; the "
			 "parser's message is above)", file, strerror(rc));
		xlu_cfg_destroy(x);
		return -1;
	}
	rc = -1;
	if (xlu_cfg_get_string(x, "name", &name, 1) != 0 || name[0] == '\0' ||
	    strlen(name) >= sizeof(out->name)) {
		snprintf(err, errlen, "%s: name = \"...\" is missing or longer "
			 "than %zu characters", file, sizeof(out->name) - 1);
		goto out;
	}
	snprintf(out->name, sizeof(out->name), "%s", name);
	if (get_name(x, file, "nfv_trust_group", out->group, err, errlen) < 0 ||
	    get_name(x, file, "nfv_service", out->service, err, errlen) < 0)
		goto out;
	switch (xlu_cfg_get_long(x, "nfv_instances", &inst, 1)) {
	case ESRCH:
		inst = 1;
		/* fall through */
	case 0:
		if (inst >= 1 && inst <= NFV_MAX_INSTANCES)
			break;
		/* fall through */
	default:
		snprintf(err, errlen, "%s: nfv_instances must be a number "
			 "from 1 to %d", file, NFV_MAX_INSTANCES);
		goto out;
	}
	out->instances = (int)inst;
	if (get_backend(x, file, out->backend, sizeof(out->backend), err,
			errlen) < 0)
		goto out;
	rc = 0;
out:
	xlu_cfg_destroy(x);
	return rc;
}
