/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of xnv-core's buffer of log lines (dom0-core/logbuf.[ch]):
 * lines come out whole and in order however they are written, a full
 * buffer drops whole lines and counts them, and the notice of the drops
 * comes out in their place with their number.
 */
#include <setjmp.h>	/* setjmp.h, stdarg.h, stddef.h: before cmocka.h */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logbuf.h"

#define UNUSED __attribute__((unused))
#define TEST(name) static void name(void **state UNUSED)

#define CAP XNV_LOGBUF_TAKE_MIN		/* the smallest buffer */

/* Everything the buffer has to give, as one string (caller frees). */
static char *
drain(struct xnv_logbuf *b, size_t max)
{
	char *out = malloc(1 << 20), *chunk = malloc(max);
	size_t n = 0, k;

	assert_non_null(out);
	assert_non_null(chunk);
	while (xnv_logbuf_pending(b)) {
		k = xnv_logbuf_take(b, chunk, max);
		assert_true(k > 0);
		/* whole lines only */
		assert_int_equal(chunk[k - 1], '\n');
		assert_true(n + k < (1 << 20));
		memcpy(out + n, chunk, k);
		n += k;
	}
	out[n] = '\0';
	free(chunk);
	return out;
}

static void
put_str(struct xnv_logbuf *b, const char *s)
{
	xnv_logbuf_put(b, s, strlen(s));
}

TEST(too_small_refused)
{
	struct xnv_logbuf b;

	assert_int_equal(xnv_logbuf_init(&b, CAP - 1), -EINVAL);
	assert_int_equal(xnv_logbuf_init(&b, CAP), 0);
	assert_false(xnv_logbuf_pending(&b));
	xnv_logbuf_free(&b);
}

TEST(lines_whole_and_in_order_from_any_pieces)
{
	struct xnv_logbuf b;
	char *out;

	assert_int_equal(xnv_logbuf_init(&b, CAP), 0);
	put_str(&b, "on");
	assert_false(xnv_logbuf_pending(&b));	/* not a line yet */
	put_str(&b, "e\ntw");
	put_str(&b, "o\nthree\nfo");
	put_str(&b, "ur");
	put_str(&b, "\n");
	out = drain(&b, CAP);
	assert_string_equal(out, "one\ntwo\nthree\nfour\n");
	free(out);
	/* a line left open at the end is ended by end_line */
	put_str(&b, "five");
	xnv_logbuf_end_line(&b);
	xnv_logbuf_end_line(&b);	/* nothing open: no empty line */
	out = drain(&b, CAP);
	assert_string_equal(out, "five\n");
	free(out);
	assert_int_equal(b.dropped, 0);
	xnv_logbuf_free(&b);
}

/* "line NNNN xxxx...\n", 100 bytes */
static void
line(char *s, unsigned i)
{
	int n = snprintf(s, 101, "line %04u ", i);

	memset(s + n, 'x', 99 - (size_t)n);
	s[99] = '\n';
	s[100] = '\0';
}

TEST(full_buffer_drops_whole_lines_counted)
{
	struct xnv_logbuf b;
	unsigned fit = CAP / 100, i;
	char s[101], want[256], *out, *p;

	assert_int_equal(xnv_logbuf_init(&b, CAP), 0);
	for (i = 0; i < fit + 7; i++) {
		line(s, i);
		/* in two pieces, the cut inside the line */
		xnv_logbuf_put(&b, s, 33);
		xnv_logbuf_put(&b, s + 33, 67);
	}
	assert_int_equal(b.dropped, 7);
	assert_int_equal(b.len, fit * 100);
	/* the lines kept (no room left for the notice in this take) */
	out = malloc(CAP);
	assert_non_null(out);
	assert_int_equal(xnv_logbuf_take(&b, out, CAP), fit * 100);
	free(out);
	assert_true(xnv_logbuf_pending(&b));
	/* room again: the next line kept comes after the notice */
	line(s, 9999);
	put_str(&b, s);
	out = drain(&b, CAP);
	snprintf(want, sizeof(want), XNV_LOGBUF_NOTE "%s", (uint64_t)7, s);
	assert_string_equal(out, want);
	free(out);
	/* a second run of drops is counted from zero again */
	for (i = 0; i < fit + 3; i++) {
		line(s, i);
		put_str(&b, s);
	}
	assert_int_equal(b.dropped, 10);
	out = drain(&b, CAP);
	/* nothing after the drops: the notice comes last, once */
	p = strstr(out, "log lines dropped");
	assert_non_null(p);
	assert_null(strstr(p + 1, "log lines dropped"));
	snprintf(want, sizeof(want), XNV_LOGBUF_NOTE, (uint64_t)3);
	assert_string_equal(out + strlen(out) - strlen(want), want);
	/* ... after every line kept, in order */
	for (i = 0; i < fit; i++) {
		line(s, i);
		assert_memory_equal(out + (size_t)i * 100, s, 100);
	}
	free(out);
	assert_false(xnv_logbuf_pending(&b));
	xnv_logbuf_free(&b);
}

TEST(long_line_kept_as_lines_of_line_max)
{
	struct xnv_logbuf b;
	size_t n = 3 * XNV_LOGBUF_LINE_MAX, i, lines = 0, ys = 0;
	char *s = malloc(n + 1), *out, *p, *nl;

	assert_non_null(s);
	memset(s, 'y', n);
	s[n] = '\n';
	assert_int_equal(xnv_logbuf_init(&b, 4 * CAP), 0);
	/* exactly LINE_MAX with its '\n': one line */
	xnv_logbuf_put(&b, s + n + 1 - XNV_LOGBUF_LINE_MAX,
		       XNV_LOGBUF_LINE_MAX);
	out = drain(&b, CAP);
	assert_int_equal(strlen(out), XNV_LOGBUF_LINE_MAX);
	free(out);
	/* longer, byte by byte: full lines of LINE_MAX, then the rest */
	for (i = 0; i <= n; i++)
		xnv_logbuf_put(&b, s + i, 1);
	out = drain(&b, CAP);
	for (p = out; *p != '\0'; p = nl + 1, lines++) {
		nl = strchr(p, '\n');
		ys += (size_t)(nl - p);
		if (nl[1] != '\0')
			assert_int_equal(nl - p, XNV_LOGBUF_LINE_MAX - 1);
	}
	assert_int_equal(ys, n);
	assert_int_equal(lines, n / (XNV_LOGBUF_LINE_MAX - 1) + 1);
	free(out);
	free(s);
	xnv_logbuf_free(&b);
}

/* Check lines "L<seq> <padding>\n" and notices taken from the buffer:
 * the sequence goes on where it stopped, the notices' counts fill the
 * gaps, each line is whole. */
static void
check_taken(const char *text, unsigned *want, uint64_t *noted)
{
	const char *p, *nl;
	unsigned seq;
	uint64_t n;

	for (p = text; *p != '\0'; p = nl + 1) {
		nl = strchr(p, '\n');
		assert_non_null(nl);
		if (sscanf(p, "xnv-core: %" SCNu64 " log lines", &n) == 1) {
			assert_true(n > 0);
			*noted += n;
			*want += (unsigned)n;	/* those were dropped */
			continue;
		}
		assert_int_equal(sscanf(p, "L%u ", &seq), 1);
		assert_int_equal(seq, *want);
		(*want)++;
		/* whole: its padding runs up to the '\n' */
		assert_int_equal(nl[-1], 'a' + seq % 26);
	}
}

/*
 * Random pieces, random takes, a buffer that wraps and fills: what comes
 * out is the lines put, in order, each whole, minus the dropped ones, and
 * the notices add up to the count.
 */
TEST(random_pieces_and_takes_keep_order_and_count)
{
	struct xnv_logbuf b;
	char s[256], chunk[CAP + 500], *rest;
	unsigned seq, want = 0, len;
	uint64_t noted = 0;
	size_t k, off;

	srand(7);
	assert_int_equal(xnv_logbuf_init(&b, CAP + 333), 0);
	for (seq = 0; seq < 50000; seq++) {
		/* a line of 10..199 bytes, in random pieces */
		len = 10 + (unsigned)rand() % 190;
		off = (size_t)snprintf(s, sizeof(s), "L%u ", seq);
		memset(s + off, 'a' + seq % 26, len - off);
		s[len - 1] = '\n';
		for (off = 0; off < len; off += k) {
			k = 1 + (size_t)rand() % (len - off);
			xnv_logbuf_put(&b, s + off, k);
		}
		if (rand() % 48 != 0)
			continue;
		k = xnv_logbuf_take(&b, chunk, XNV_LOGBUF_TAKE_MIN +
				    (size_t)rand() % 500);
		chunk[k] = '\0';
		check_taken(chunk, &want, &noted);
	}
	assert_true(b.dropped > 1000);
	assert_true(want - noted > 1000);	/* and many kept */
	rest = drain(&b, CAP);
	check_taken(rest, &want, &noted);
	free(rest);
	assert_int_equal(want, 50000);
	assert_int_equal(noted, b.dropped);
	xnv_logbuf_free(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(too_small_refused),
		cmocka_unit_test(lines_whole_and_in_order_from_any_pieces),
		cmocka_unit_test(full_buffer_drops_whole_lines_counted),
		cmocka_unit_test(long_line_kept_as_lines_of_line_max),
		cmocka_unit_test(random_pieces_and_takes_keep_order_and_count),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
