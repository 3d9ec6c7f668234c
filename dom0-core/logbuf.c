/* SPDX-License-Identifier: BSD-3-Clause */
/* The bounded buffer of log lines (logbuf.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logbuf.h"

int
xnv_logbuf_init(struct xnv_logbuf *b, size_t cap)
{
	memset(b, 0, sizeof(*b));
	if (cap < XNV_LOGBUF_TAKE_MIN)
		return -EINVAL;
	b->data = malloc(cap);
	if (b->data == NULL)
		return -ENOMEM;
	b->cap = cap;
	return 0;
}

void
xnv_logbuf_free(struct xnv_logbuf *b)
{
	free(b->data);
	b->data = NULL;
	b->cap = b->len = 0;
}

/* Copy @p n bytes in at the tail (the caller checked the room). */
static void
ring_in(struct xnv_logbuf *b, const char *s, size_t n)
{
	size_t tail = (b->head + b->len) % b->cap;
	size_t first = n < b->cap - tail ? n : b->cap - tail;

	memcpy(b->data + tail, s, first);
	memcpy(b->data, s + first, n - first);
	b->len += n;
}

/* Copy @p n bytes out from the head, without taking them. */
static void
ring_peek(const struct xnv_logbuf *b, char *out, size_t n)
{
	size_t first = n < b->cap - b->head ? n : b->cap - b->head;

	memcpy(out, b->data + b->head, first);
	memcpy(out + first, b->data, n - first);
}

/* The notice of the lines dropped since the last one kept, in @p out. */
static size_t
note(const struct xnv_logbuf *b, char *out)
{
	int n = snprintf(out, XNV_LOGBUF_NOTE_MAX, "%s" XNV_LOGBUF_NOTE,
			 b->note_stamp, b->gap);

	return n > 0 && n < XNV_LOGBUF_NOTE_MAX ? (size_t)n : 0;
}

/* One whole line (ending in '\n'): kept, after the notice of the drops
 * before it if there were some, or dropped and counted. */
static void
commit(struct xnv_logbuf *b, const char *line, size_t n)
{
	char text[XNV_LOGBUF_NOTE_MAX];
	size_t nn = b->gap > 0 ? note(b, text) : 0;

	if (b->cap - b->len < nn + n) {
		b->dropped++;
		b->gap++;
		return;
	}
	ring_in(b, text, nn);
	b->gap = 0;
	ring_in(b, line, n);
}

void
xnv_logbuf_put(struct xnv_logbuf *b, const char *s, size_t n)
{
	while (n > 0) {
		const char *nl = memchr(s, '\n', n);
		size_t k = nl != NULL ? (size_t)(nl - s) + 1 : n;
		size_t room = XNV_LOGBUF_LINE_MAX - b->part_len;
		int cut = k > room || (nl == NULL && k == room);

		if (cut)	/* too long: this much and a '\n' are a line */
			k = room - 1;
		memcpy(b->part + b->part_len, s, k);
		b->part_len += k;
		s += k;
		n -= k;
		if (nl == NULL && !cut)
			break;		/* the line goes on in a later piece */
		if (cut)
			b->part[b->part_len++] = '\n';
		commit(b, b->part, b->part_len);
		b->part_len = 0;
	}
}

void
xnv_logbuf_end_line(struct xnv_logbuf *b)
{
	if (b->part_len == 0)
		return;
	b->part[b->part_len++] = '\n';
	commit(b, b->part, b->part_len);
	b->part_len = 0;
}

size_t
xnv_logbuf_take(struct xnv_logbuf *b, char *out, size_t max)
{
	size_t n = b->len < max ? b->len : max;

	ring_peek(b, out, n);
	if (n < b->len) {	/* only whole lines: up to the last '\n' */
		const char *nl = memrchr(out, '\n', n);

		n = nl != NULL ? (size_t)(nl - out) + 1 : n;
	}
	b->head = (b->head + n) % b->cap;
	b->len -= n;
	if (b->len == 0) {
		b->head = 0;
		/* Everything before the drops is out: their notice now. */
		if (b->gap > 0 && max - n >= XNV_LOGBUF_NOTE_MAX) {
			n += note(b, out + n);
			b->gap = 0;
		}
	}
	return n;
}
