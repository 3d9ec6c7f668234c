/* SPDX-License-Identifier: BSD-3-Clause */
/* libgntshare internals: the token bucket every limit on what a peer may
 * make the server do is built from (host_server.c: requests, attaches,
 * connections; xen_events.c: a domain's XenStore events). */
#ifndef GNTSHARE_BUCKET_H
#define GNTSHARE_BUCKET_H

#include <stdint.h>

/* Work a sender may cause: per_s a second, up to burst at once. */
struct gnts_bucket {
	uint32_t tokens;
	uint64_t ms;		/* last refill */
};

/* 1 if @p b (refilled to @p now_ms) has a token; take it with take=1.
 * A refill moves the clock to @p now_ms and drops the fraction of a
 * token: a sender gets a little less than per_s, never more. */
static inline int
gnts_bucket_has(struct gnts_bucket *b, uint32_t per_s, uint32_t burst,
		uint64_t now_ms, int take)
{
	uint64_t add = (now_ms - b->ms) * per_s / 1000;

	if (add > 0) {
		b->tokens = b->tokens + add < burst ?
			    (uint32_t)(b->tokens + add) : burst;
		b->ms = now_ms;
	}
	if (b->tokens == 0)
		return 0;
	b->tokens -= take ? 1 : 0;
	return 1;
}

#endif
