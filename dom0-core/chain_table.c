/* SPDX-License-Identifier: BSD-3-Clause */
/* The table of chain versions: see chain_table.h. */
#include <errno.h>
#include <string.h>

#include "chain_table.h"

/* Same steps?  (Versions never change, so equal ones can be shared.) */
int
xnv_chain_same(const struct xnv_chain *a, const struct xnv_chain *b)
{
	unsigned i;

	if (a->n != b->n)
		return 0;
	for (i = 0; i < a->n; i++)
		if (a->s[i].kind != b->s[i].kind || a->s[i].id != b->s[i].id ||
		    a->s[i].hop != b->s[i].hop)
			return 0;
	return 1;
}

int
xnv_chain_table_get(struct xnv_chain_slot t[XNV_MAX_CHAINS],
		    const struct xnv_chain *ch)
{
	unsigned i;

	for (i = 0; i < XNV_MAX_CHAINS; i++)
		if (t[i].used && xnv_chain_same(&t[i].ch, ch)) {
			t[i].users++;
			return (int)i;
		}
	for (i = 0; i < XNV_MAX_CHAINS; i++) {
		if (t[i].used)
			continue;
		memset(&t[i], 0, sizeof(t[i]));
		t[i].ch = *ch;
		t[i].used = 1;
		t[i].users = 1;
		return (int)i;
	}
	return -ENOSPC;
}

void
xnv_chain_table_unuse(struct xnv_chain_slot t[XNV_MAX_CHAINS], uint16_t id)
{
	if (id < XNV_MAX_CHAINS && t[id].users > 0)
		t[id].users--;
}

void
xnv_chain_table_sweep(struct xnv_chain_slot t[XNV_MAX_CHAINS],
		      const uint8_t live[XNV_MAX_CHAINS])
{
	unsigned i;

	for (i = 0; i < XNV_MAX_CHAINS; i++)
		if (t[i].used && t[i].users == 0 && !live[i])
			t[i].used = 0;
}
