/* SPDX-License-Identifier: BSD-3-Clause */
/* Fabric ports: hop tags off on rx, on at a PORT:HOP step (fabric.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_telemetry.h>

#include "chain.h"
#include "core.h"
#include "ctl.h"
#include "fabric.h"

int
xnv_fabric_set_hops(struct xnv_core *c, const struct xnv_cfg_hop *h,
		    uint16_t n)
{
	uint16_t ids[XNV_MAX_HOPS], i, k;
	int rc;

	/* Every version first, so a full table changes nothing. */
	for (i = 0; i < n; i++) {
		rc = xnv_chain_new(c, &h[i].chain);
		if (rc < 0) {
			for (k = 0; k < i; k++)
				xnv_chain_unuse(c, ids[k]);
			return rc;
		}
		ids[i] = (uint16_t)rc;
	}
	for (k = 1; k <= XNV_HOP_MAX; k++) {
		if (c->hops[k].chain != XNV_CHAIN_NONE)
			xnv_chain_unuse(c, c->hops[k].chain);
		c->hops[k].chain = XNV_CHAIN_NONE;
	}
	for (i = 0; i < n; i++) {
		c->hops[h[i].hop].chain = ids[i];
		c->hops[h[i].hop].port = h[i].port;
	}
	return 0;
}

int
xnv_fabric_start(struct xnv_core *c)
{
	unsigned k;

	for (k = 0; k <= XNV_HOP_MAX; k++)
		c->hops[k] = (struct xnv_hop){ .chain = XNV_CHAIN_NONE };
	return xnv_fabric_set_hops(c, c->cfg.hops, c->cfg.n_hops);
}

/* The hop @p m arrived with, its tag taken off; 0: none. */
static uint16_t
pop_hop(struct rte_mbuf *m)
{
	uint8_t *d = rte_pktmbuf_mtod(m, uint8_t *);
	uint16_t tci;

	/* af_packet hands the outer tag over apart from the frame. */
	if (m->ol_flags & RTE_MBUF_F_RX_VLAN_STRIPPED) {
		m->ol_flags &= ~(RTE_MBUF_F_RX_VLAN |
				 RTE_MBUF_F_RX_VLAN_STRIPPED);
		return m->vlan_tci & 0xfff;
	}
	if (m->data_len < 2 * RTE_ETHER_ADDR_LEN + 4 ||
	    d[12] != (RTE_ETHER_TYPE_VLAN >> 8) ||
	    d[13] != (RTE_ETHER_TYPE_VLAN & 0xff))
		return 0;
	tci = (uint16_t)(d[14] << 8 | d[15]);
	memmove(d + 4, d, 2 * RTE_ETHER_ADDR_LEN);
	rte_pktmbuf_adj(m, 4);
	return tci & 0xfff;
}

/* One packet more in @p ctr, the calling worker's counter of @p hop
 * (its hop_rx or hop_tx). */
static inline void
hop_count(struct xnv_wcount *wc, uint64_t *ctr, uint16_t hop)
{
	uint64_t *seen = &wc->hop_seen[hop / 64], bit = 1ull << (hop % 64);

	xnv_count(ctr, 1);
	if (!(*seen & bit))	/* which hops the fold looks at */
		__atomic_store_n(seen, *seen | bit, __ATOMIC_RELAXED);
}

unsigned
xnv_fabric_rx(struct xnv_core *c, uint16_t idx, struct rte_mbuf **m,
	      uint16_t *chain, unsigned n)
{
	struct xnv_wcount *wc = XNV_WC();
	unsigned i, k = 0;
	uint16_t hop;

	for (i = 0; i < n; i++) {
		/* Left to the caller's check, as on any port. */
		if (m[i]->nb_segs != 1 || m[i]->data_len == 0) {
			chain[k] = XNV_CHAIN_NONE;
			m[k++] = m[i];
			continue;
		}
		hop = pop_hop(m[i]);
		if (hop == 0 || hop > XNV_HOP_MAX ||
		    c->hops[hop].chain == XNV_CHAIN_NONE ||
		    c->hops[hop].port != idx) {
			xnv_count(&wc->drops[XNV_DROP_FABRIC], 1);
			rte_pktmbuf_free(m[i]);
			continue;
		}
		hop_count(wc, &wc->hop_rx[hop], hop);
		chain[k] = c->hops[hop].chain;
		m[k++] = m[i];
	}
	return k;
}

int
xnv_vlan_push(struct rte_mbuf *m, uint16_t tci)
{
	uint8_t *d;

	if (m->data_len < 2 * RTE_ETHER_ADDR_LEN)
		return -1;
	d = (uint8_t *)rte_pktmbuf_prepend(m, sizeof(struct rte_vlan_hdr));
	if (d == NULL)
		return -1;
	memmove(d, d + sizeof(struct rte_vlan_hdr), 2 * RTE_ETHER_ADDR_LEN);
	d += 2 * RTE_ETHER_ADDR_LEN;
	d[0] = RTE_ETHER_TYPE_VLAN >> 8;
	d[1] = RTE_ETHER_TYPE_VLAN & 0xff;
	d[2] = (uint8_t)(tci >> 8);
	d[3] = (uint8_t)(tci & 0xff);
	return 0;
}

void
xnv_fabric_push(struct rte_mbuf *m, struct xnv_mbuf_priv *pv, uint16_t hop)
{
	struct xnv_wcount *wc = XNV_WC();

	/* Only missing headroom (an NF moved the data to the buffer's
	 * start) or a frame shorter than two addresses fails. */
	if (xnv_vlan_push(m, hop) != 0) {
		pv->tgt_kind = XNV_STEP_DROP;
		pv->tgt_id = XNV_STEP_DROP_FABRIC;
		return;
	}

	hop_count(wc, &wc->hop_tx[hop], hop);
}

/* Hop @p k as a dict under its number in @p d; -1: out of memory. */
static int
add_hop(struct xnv_core *c, struct rte_tel_data *d, unsigned k)
{
	static const struct xnv_chain none;
	const struct xnv_hop *x = &c->hops[k];
	struct rte_tel_data *h = rte_tel_data_alloc(), *ch;
	char key[8];

	ch = xnv_ctl_chain_array(c, x->chain == XNV_CHAIN_NONE ? &none :
				 &c->chains[x->chain].ch, d);
	if (h == NULL || ch == NULL) {
		rte_tel_data_free(h);
		rte_tel_data_free(ch);
		return -1;
	}
	rte_tel_data_start_dict(h);
	rte_tel_data_add_dict_string(h, "port", x->chain == XNV_CHAIN_NONE ?
				     "" : c->cfg.ports[x->port].name);
	rte_tel_data_add_dict_container(h, "chain", ch, 0);
	rte_tel_data_add_dict_u64(h, "rx", x->rx);
	rte_tel_data_add_dict_u64(h, "tx", x->tx);
	snprintf(key, sizeof(key), "%u", k);
	rte_tel_data_add_dict_container(d, key, h, 0);
	return 0;
}

/* Hops in force first, then removed ones that counted packets; what a
 * telemetry dict cannot hold is counted under "more", never cut off
 * unsaid. */
void
xnv_cmd_fabric(struct xnv_core *c, const char *p, struct rte_tel_data *d)
{
	unsigned k, pass, shown = 0, more = 0;

	(void)p;
	rte_tel_data_start_dict(d);
	for (pass = 0; pass < 2; pass++)
		for (k = 1; k <= XNV_HOP_MAX; k++) {
			const struct xnv_hop *x = &c->hops[k];

			if (pass == 0 ? x->chain == XNV_CHAIN_NONE :
			    x->chain != XNV_CHAIN_NONE || (x->rx | x->tx) == 0)
				continue;
			if (shown == RTE_TEL_MAX_DICT_ENTRIES - 1) {
				more++;
				continue;
			}
			if (add_hop(c, d, k) < 0) {
				xnv_ctl_error(d, "out of memory");
				return;
			}
			shown++;
		}
	if (more)
		rte_tel_data_add_dict_u64(d, "more", more);
}
