/* SPDX-License-Identifier: BSD-3-Clause */
/* The config file's reader, with line numbers; see config_file.h. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_file.h"

#define LINE_MAX_LEN 1024

int
xnv_cfg_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

char *
xnv_cfg_trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

unsigned
xnv_ini_line(const struct xnv_ini *ini, const char *sec, const char *key)
{
	unsigned i;

	if (key == NULL)
		key = "";
	for (i = 0; i < ini->n; i++)
		if (strcmp(ini->at[i].key, key) == 0 &&
		    strcmp(ini->at[i].sec, sec) == 0)
			return ini->at[i].line;
	return 0;
}

static int
remember(struct xnv_ini *ini, const char *sec, const char *key,
	 unsigned line)
{
	struct xnv_ini_at *a;

	if (ini->n == ini->cap) {
		unsigned cap = ini->cap ? 2 * ini->cap : 64;

		a = realloc(ini->at, cap * sizeof(*a));
		if (a == NULL)
			return -ENOMEM;
		ini->at = a;
		ini->cap = cap;
	}
	a = &ini->at[ini->n++];
	snprintf(a->sec, sizeof(a->sec), "%s", sec);
	snprintf(a->key, sizeof(a->key), "%s", key);
	a->line = line;
	return 0;
}

/* "[NAME]" at @p lineno: a new section. */
static int
header(struct xnv_ini *ini, char *s, unsigned lineno, char *sec,
       char *err, size_t errlen)
{
	const char *p = ini->path;
	unsigned first;

	if (s[strlen(s) - 1] != ']')
		return xnv_cfg_fail(err, errlen, "%s:%u: section header without "
			    "closing ']'", p, lineno);
	s[strlen(s) - 1] = '\0';
	s = xnv_cfg_trim(s + 1);
	if (strlen(s) >= CFG_NAME_LEN)
		return xnv_cfg_fail(err, errlen, "%s:%u: section name too long", p,
			    lineno);
	if (*s == '\0')
		return xnv_cfg_fail(err, errlen, "%s:%u: empty section name", p,
			    lineno);
	if ((first = xnv_ini_line(ini, s, NULL)) != 0)
		return xnv_cfg_fail(err, errlen, "%s:%u: [%s]: declared twice (first "
			    "on line %u)", p, lineno, s, first);
	strcpy(sec, s);
	if (rte_cfgfile_add_section(ini->cf, sec) < 0 ||
	    remember(ini, sec, "", lineno) < 0)
		return -ENOMEM;
	return 0;
}

/* The line of @p key in the section read last (its keys are the last
 * ones remembered, after its header), or 0. */
static unsigned
key_line(const struct xnv_ini *ini, const char *key)
{
	unsigned i = ini->n;

	while (i-- > 0 && ini->at[i].key[0] != '\0')
		if (strcmp(ini->at[i].key, key) == 0)
			return ini->at[i].line;
	return 0;
}

/* "key = value" at @p lineno, in section @p sec ("" before any). */
static int
entry(struct xnv_ini *ini, char *s, unsigned lineno, const char *sec,
      char *err, size_t errlen)
{
	const char *p = ini->path;
	char *eq = strchr(s, '='), *k, *v;
	unsigned first;

	if (eq == NULL)
		return xnv_cfg_fail(err, errlen, "%s:%u: expected 'key = value' or "
			    "'[section]', got '%s'", p, lineno, s);
	if (*sec == '\0')
		return xnv_cfg_fail(err, errlen, "%s:%u: 'key = value' before any "
			    "[section]", p, lineno);
	*eq = '\0';
	k = xnv_cfg_trim(s);
	v = xnv_cfg_trim(eq + 1);
	if (*k == '\0')
		return xnv_cfg_fail(err, errlen, "%s:%u: empty key", p, lineno);
	if (*v == '\0')
		return xnv_cfg_fail(err, errlen, "%s:%u: empty value (leave the key "
			    "out instead)", p, lineno);
	if (strlen(k) >= CFG_NAME_LEN || strlen(v) >= CFG_VALUE_LEN)
		return xnv_cfg_fail(err, errlen, "%s:%u: key or value too long", p,
			    lineno);
	if ((first = key_line(ini, k)) != 0)
		return xnv_cfg_fail(err, errlen, "%s:%u: [%s]: %s given twice (first "
			    "on line %u)", p, lineno, sec, k, first);
	if (rte_cfgfile_add_entry(ini->cf, sec, k, v) < 0 ||
	    remember(ini, sec, k, lineno) < 0)
		return -ENOMEM;
	return 0;
}

static int
read_lines(struct xnv_ini *ini, FILE *f, char *err, size_t errlen)
{
	char line[LINE_MAX_LEN + 2], sec[CFG_NAME_LEN] = "";
	unsigned lineno = 0;
	int rc = 0;

	while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
		char *s, *c;

		lineno++;
		if (strchr(line, '\n') == NULL && !feof(f))
			return xnv_cfg_fail(err, errlen, "%s:%u: line longer than %d "
				    "characters", ini->path, lineno,
				    LINE_MAX_LEN);
		if ((c = strchr(line, ';')) != NULL)
			*c = '\0';
		s = xnv_cfg_trim(line);
		if (*s == '\0' || *s == '#')
			continue;
		rc = *s == '[' ? header(ini, s, lineno, sec, err, errlen) :
				 entry(ini, s, lineno, sec, err, errlen);
	}
	if (rc == 0 && ferror(f))
		rc = xnv_cfg_fail(err, errlen, "%s: %s", ini->path, strerror(errno));
	if (rc == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", ini->path);
	return rc;
}

int
xnv_ini_read(const char *path, struct xnv_ini *ini, char *err, size_t errlen)
{
	FILE *f;
	int rc;

	memset(ini, 0, sizeof(*ini));
	snprintf(ini->path, sizeof(ini->path), "%s", path);
	f = fopen(path, "r");
	if (f == NULL) {
		rc = -errno;
		xnv_cfg_fail(err, errlen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	ini->cf = rte_cfgfile_create(0);
	if (ini->cf == NULL)
		rc = -ENOMEM, xnv_cfg_fail(err, errlen, "%s: out of memory", path);
	else
		rc = read_lines(ini, f, err, errlen);
	fclose(f);
	if (rc < 0)
		xnv_ini_close(ini);
	return rc;
}

/* The line of word @p w (@p n bytes) as a key of [@p sec], or 0. */
static unsigned
word_line(const struct xnv_ini *ini, const char *sec, const char *w, size_t n)
{
	char key[CFG_NAME_LEN];

	if (n == 0 || n >= sizeof(key))
		return 0;
	memcpy(key, w, n);
	key[n] = '\0';
	return xnv_ini_line(ini, sec, key);
}

/* The line of the first 'quoted' word of @p s that is a key of [@p sec],
 * or 0. */
static unsigned
quoted_key_line(const struct xnv_ini *ini, const char *sec, const char *s)
{
	const char *q;
	unsigned line;
	size_t n;

	while ((q = strchr(s, '\'')) != NULL) {
		n = strcspn(q + 1, "'");
		if (q[1 + n] == '\0')
			return 0;
		if ((line = word_line(ini, sec, q + 1, n)) != 0)
			return line;
		s = q + n + 2;
	}
	return 0;
}

void
xnv_ini_locate(const struct xnv_ini *ini, char *err, size_t errlen)
{
	char sec[CFG_NAME_LEN], tmp[1024];
	const char *close, *k;
	unsigned line = 0;
	size_t n;

	if (strncmp(err, ini->path, strlen(ini->path)) == 0)
		return;
	close = err[0] == '[' ? strchr(err, ']') : NULL;
	if (close != NULL && (size_t)(close - err - 1) < sizeof(sec)) {
		memcpy(sec, err + 1, (size_t)(close - err - 1));
		sec[close - err - 1] = '\0';
		/* "[sec] key ...", "[sec]: key ...", else a 'quoted' key */
		k = close + 1 + (close[1] == ':');
		k += strspn(k, " ");
		/* a key may be numbered: hop.18 */
		n = strspn(k, "abcdefghijklmnopqrstuvwxyz_.0123456789");
		while (n > 0 && k[n - 1] == '.')
			n--;
		line = word_line(ini, sec, k, n);
		if (line == 0)
			line = quoted_key_line(ini, sec, k);
		if (line == 0)
			line = xnv_ini_line(ini, sec, NULL);
	}
	if (line != 0)
		snprintf(tmp, sizeof(tmp), "%s:%u: %s", ini->path, line, err);
	else
		snprintf(tmp, sizeof(tmp), "%s: %s", ini->path, err);
	snprintf(err, errlen, "%s", tmp);
}

void
xnv_ini_close(struct xnv_ini *ini)
{
	if (ini->cf != NULL)
		rte_cfgfile_close(ini->cf);
	free(ini->at);
	ini->cf = NULL;
	ini->at = NULL;
	ini->n = ini->cap = 0;
}
