/* SPDX-License-Identifier: BSD-3-Clause */
/* Hostile or stuck NFs: error budget, quarantine, heartbeat (guard.c). */
#ifndef XNV_GUARD_H
#define XNV_GUARD_H

#include <stdint.h>

#include "validate.h"

struct xnv_core;
struct xnv_nfrec;

void xnv_rec_quarantine(struct xnv_core *c, struct xnv_nfrec *nf,
			const char *why);
int xnv_rec_charge_bad(struct xnv_core *c, struct xnv_nfrec *nf,
		       uint64_t now, unsigned n, int last_kind);
void xnv_rec_watch(struct xnv_core *c, uint64_t now);
/* Worker 0: the quarantines other workers asked for (guard.c). */
void xnv_rec_requests(struct xnv_core *c);
extern const char *const xnv_bad_names[XNV_BAD_N];

#endif /* XNV_GUARD_H */
