/* SPDX-License-Identifier: BSD-3-Clause */
/* Line-numbered rule files (see rules.h). */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "rules.h"

int
rfile_open(struct rfile *rf, const char *path)
{
	memset(rf, 0, sizeof(*rf));
	rf->path = path;
	rf->f = fopen(path, "r");
	if (rf->f == NULL) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

int
rfile_error(const struct rfile *rf, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s:%u: ", rf->path, rf->line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

/* Split rf->buf into words; @return their number or -1. */
static int
split(struct rfile *rf)
{
	char *p = rf->buf;

	rf->n_words = 0;
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
			p++;
		if (*p == '\0' || *p == '#')
			return rf->n_words;
		if (rf->n_words == RFILE_WORDS_MAX)
			return rfile_error(rf, "more than %d words",
					   RFILE_WORDS_MAX);
		rf->word[rf->n_words++] = p;
		if (*p == '"') {
			for (p++; *p != '"'; p++) {
				if (*p == '\\' && p[1] != '\0')
					p++;
				else if (*p == '\0' || *p == '\n')
					return rfile_error(rf, "unterminated "
							   "quoted string");
			}
			p++;
			if (*p != '\0' && *p != ' ' && *p != '\t' &&
			    *p != '\r' && *p != '\n')
				return rfile_error(rf, "text after a closing "
						   "quote");
		} else {
			while (*p != '\0' && *p != ' ' && *p != '\t' &&
			       *p != '\r' && *p != '\n' && *p != '#')
				p++;
		}
		if (*p == '#') {
			*p = '\0';
			return rf->n_words;
		}
		if (*p != '\0')
			*p++ = '\0';
	}
}

int
rfile_next(struct rfile *rf)
{
	size_t len;
	int n;

	while (fgets(rf->buf, sizeof(rf->buf), rf->f) != NULL) {
		rf->line++;
		len = strlen(rf->buf);
		if (len == RFILE_LINE_MAX && rf->buf[len - 1] != '\n')
			return rfile_error(rf, "line longer than %d bytes",
					   RFILE_LINE_MAX - 1);
		if ((n = split(rf)) != 0)
			return n;
	}
	if (ferror(rf->f)) {
		fprintf(stderr, "%s: read error\n", rf->path);
		return -1;
	}
	return 0;
}

void
rfile_close(struct rfile *rf)
{
	if (rf->f != NULL)
		fclose(rf->f);
	rf->f = NULL;
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int
unquote(const char *w, uint8_t *out, size_t max, const char **why)
{
	size_t n = 0, len = strlen(w);
	const char *p = w + 1, *end = w + len - 1;

	if (len < 2 || w[0] != '"' || *end != '"') {
		*why = "not a quoted string";
		return -1;
	}
	for (; p < end; p++) {
		int c = (unsigned char)*p;

		if (c == '\\') {
			p++;
			switch (*p) {
			case '\\': c = '\\'; break;
			case '"': c = '"'; break;
			case 'n': c = '\n'; break;
			case 'r': c = '\r'; break;
			case 't': c = '\t'; break;
			case '0': c = 0; break;
			case 'x':
				if (p + 2 >= end || hexval(p[1]) < 0 ||
				    hexval(p[2]) < 0) {
					*why = "\\x needs two hex digits";
					return -1;
				}
				c = hexval(p[1]) << 4 | hexval(p[2]);
				p += 2;
				break;
			default:
				*why = "unknown escape (use \\\\ \\\" \\n \\r "
				       "\\t \\0 \\xHH)";
				return -1;
			}
		}
		if (n == max) {
			*why = "string too long";
			return -1;
		}
		out[n++] = (uint8_t)c;
	}
	return (int)n;
}
