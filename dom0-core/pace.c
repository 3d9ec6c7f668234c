/* SPDX-License-Identifier: BSD-3-Clause */
/* Paced rx, the arithmetic (no DPDK: tests/unit/test_pace.c): see pace.h. */
#include "pace.h"

void
xnv_pace_init(struct xnv_pace *p, uint64_t pps, uint64_t tsc_hz)
{
	p->next = 0;
	p->cost = pps ? (tsc_hz << 8) / pps : 0;
	if (pps && p->cost == 0)
		p->cost = 1;
}
