/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A bounded buffer of log lines (no DPDK, no lock, no I/O: logsink.c
 * holds the lock and does the writing; test_logbuf tests this part).
 *
 * Writers put bytes in any pieces; only whole lines enter the buffer.  A
 * line that finds no room is dropped whole and counted.  The reader takes
 * whole lines, oldest first; where lines were dropped it also gets one
 * line saying how many (XNV_LOGBUF_NOTE), in their place: before the next
 * line kept, or last once everything before the drops is out.
 *
 * Usage:
 *	struct xnv_logbuf b;
 *	char out[XNV_LOGBUF_TAKE_MIN];
 *
 *	xnv_logbuf_init(&b, 1 << 20);
 *	xnv_logbuf_put(&b, "a line", 6);
 *	xnv_logbuf_put(&b, " and its end\n", 13);
 *	while (xnv_logbuf_pending(&b))
 *		write_all(fd, out, xnv_logbuf_take(&b, out, sizeof(out)));
 */
#ifndef XNV_LOGBUF_H
#define XNV_LOGBUF_H

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>

/* A longer line is kept as lines of this many bytes, '\n' included. */
#define XNV_LOGBUF_LINE_MAX 4096
/* The notice of dropped lines (one printf argument: the count). */
#define XNV_LOGBUF_NOTE \
	"xnv-core: %" PRIu64 " log lines dropped (stderr was not being read)\n"
#define XNV_LOGBUF_NOTE_MAX 136	/* note_stamp and the notice */
/* The least room xnv_logbuf_take() needs: a longest line and a notice. */
#define XNV_LOGBUF_TAKE_MIN (XNV_LOGBUF_LINE_MAX + XNV_LOGBUF_NOTE_MAX)

struct xnv_logbuf {
	char *data;		/* ring of whole lines */
	size_t cap;		/* its bytes */
	size_t head;		/* offset of the oldest byte */
	size_t len;		/* bytes held */
	uint64_t dropped;	/* lines dropped since init */
	uint64_t gap;		/* of those, since the last kept or noted */
	char note_stamp[40];	/* what the notice starts with (the sink:
				 * its time and level; "" from init) */
	size_t part_len;	/* bytes of the line not ended yet */
	char part[XNV_LOGBUF_LINE_MAX];
};

/** A buffer of @p cap >= XNV_LOGBUF_TAKE_MIN bytes; -EINVAL, -ENOMEM. */
int xnv_logbuf_init(struct xnv_logbuf *b, size_t cap);
void xnv_logbuf_free(struct xnv_logbuf *b);

/** Add @p n bytes from a writer; each line they end is kept or dropped. */
void xnv_logbuf_put(struct xnv_logbuf *b, const char *s, size_t n);

/** End the line in progress, if any, with a '\n' (before a last flush). */
void xnv_logbuf_end_line(struct xnv_logbuf *b);

/** Something to take: lines, or a notice of dropped ones. */
static inline int
xnv_logbuf_pending(const struct xnv_logbuf *b)
{
	return b->len > 0 || b->gap > 0;
}

/**
 * Move whole lines, oldest first, into @p out (@p max bytes, at least
 * XNV_LOGBUF_TAKE_MIN); returns the bytes written there.
 */
size_t xnv_logbuf_take(struct xnv_logbuf *b, char *out, size_t max);

#endif /* XNV_LOGBUF_H */
