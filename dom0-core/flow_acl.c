/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flow rules -> rte_acl.  Two contexts: IPv4 and IPv6 (DPDK's l3fwd-acl
 * does the same: a trie over 16-byte addresses would slow every IPv4
 * packet down).  A rule without an address goes into both.
 *
 * The input of one packet (network byte order, as rte_acl wants it; rules
 * are in host order).  rte_acl reads the first byte alone, then groups of
 * four bytes, one group per input_index:
 *
 *   IPv4 (24 B)                     IPv6 (48 B)
 *   0   proto        (u8)   in 0    0   proto            in 0
 *   4   vlan  (u16) l4 (u16) in 1   4   vlan, l4         in 1
 *   8   in_port      (u32)  in 2    8   in_port          in 2
 *   12  src          (u32)  in 3    12  src  4 x u32     in 3..6
 *   16  dst          (u32)  in 4    28  dst  4 x u32     in 7..10
 *   20  sport, dport (u16s) in 5    44  sport, dport     in 11
 *
 * l4 is 1 when the core read the packet's ports: a rule with a port range
 * requires it, so a fragment (ports unknown, 0 in the key) never matches
 * one.  vlan is XNV_KEY_NO_VLAN for an untagged frame.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_acl.h>
#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "flow_acl.h"
#include "sizes.h"

struct in4 {
	uint8_t proto, pad[3];
	uint16_t vlan, l4;
	uint32_t in_port, src, dst;
	uint16_t sport, dport;
};

struct in6 {
	uint8_t proto, pad[3];
	uint16_t vlan, l4;
	uint32_t in_port, src[4], dst[4];
	uint16_t sport, dport;
};

_Static_assert(sizeof(struct in4) == 24 && sizeof(struct in6) == 48,
	       "the layout drawn above");

/* Field indexes: the same first five in both families. */
enum { F_PROTO, F_VLAN, F_L4, F_PORT, F_SRC };
#define N4 (F_SRC + 4)		/* src dst sport dport */
#define N6 (F_SRC + 10)		/* src[4] dst[4] sport dport */

RTE_ACL_RULE_DEF(acl_rule6, N6);

#define ACL_PARTS_MAX 64	/* contexts per family, at most */
#define ACL_PART_MIN  16	/* rules a part is not split below */

struct xnv_acl {
	unsigned n[2];				/* IPv4, IPv6 */
	struct rte_acl_ctx *ctx[2][ACL_PARTS_MAX];	/* best rules first */
};

static void
def(struct rte_acl_config *cfg, uint8_t type, uint8_t size, uint8_t in,
    uint32_t off)
{
	struct rte_acl_field_def *d = &cfg->defs[cfg->num_fields];

	*d = (struct rte_acl_field_def){ .type = type, .size = size,
		.field_index = (uint8_t)cfg->num_fields, .input_index = in,
		.offset = off };
	cfg->num_fields++;
}

static void
layout(struct rte_acl_config *cfg, int v6)
{
	uint8_t i, words = v6 ? 4 : 1;
	uint32_t src = v6 ? offsetof(struct in6, src) : offsetof(struct in4, src);

	memset(cfg, 0, sizeof(*cfg));
	cfg->num_categories = 1;
	def(cfg, RTE_ACL_FIELD_TYPE_BITMASK, 1, 0, 0);
	def(cfg, RTE_ACL_FIELD_TYPE_RANGE, 2, 1, offsetof(struct in4, vlan));
	def(cfg, RTE_ACL_FIELD_TYPE_BITMASK, 2, 1, offsetof(struct in4, l4));
	def(cfg, RTE_ACL_FIELD_TYPE_RANGE, 4, 2,
	    offsetof(struct in4, in_port));
	for (i = 0; i < 2 * words; i++)	/* src words, then dst words */
		def(cfg, RTE_ACL_FIELD_TYPE_MASK, 4, (uint8_t)(3 + i),
		    src + 4u * i);
	def(cfg, RTE_ACL_FIELD_TYPE_RANGE, 2, (uint8_t)(3 + 2 * words),
	    src + 8u * words);
	def(cfg, RTE_ACL_FIELD_TYPE_RANGE, 2, (uint8_t)(3 + 2 * words),
	    src + 8u * words + 2);
}

static void
range(struct rte_acl_field *f, uint32_t lo, uint32_t hi)
{
	f->value.u32 = lo;
	f->mask_range.u32 = hi;
}

/* Address words of a prefix: host order values, per-word prefix length. */
static void
prefix(struct rte_acl_field *f, const uint8_t *a, unsigned len, int words)
{
	int i;

	for (i = 0; i < words; i++) {
		int l = (int)len - 32 * i;
		uint32_t w;

		memcpy(&w, a + 4 * i, 4);
		f[i].value.u32 = rte_be_to_cpu_32(w);
		f[i].mask_range.u32 = (uint32_t)RTE_MAX(0, RTE_MIN(32, l));
	}
}

static void
to_acl(const struct xnv_flow_rule *r, int v6, struct acl_rule6 *a)
{
	int words = v6 ? 4 : 1, ports = r->sport[0] != 0 ||
		r->sport[1] != 65535 || r->dport[0] != 0 ||
		r->dport[1] != 65535;

	memset(a->field, 0, sizeof(a->field));
	if (r->proto != XNV_FLOW_ANY) {
		a->field[F_PROTO].value.u8 = (uint8_t)r->proto;
		a->field[F_PROTO].mask_range.u8 = 0xff;
	}
	if (r->vlan == XNV_FLOW_ANY)
		range(&a->field[F_VLAN], 0, 0xffff);
	else
		range(&a->field[F_VLAN], (uint32_t)r->vlan, (uint32_t)r->vlan);
	a->field[F_L4].value.u16 = (uint16_t)ports;
	a->field[F_L4].mask_range.u16 = (uint16_t)ports;
	if (r->in_port == XNV_FLOW_ANY)
		range(&a->field[F_PORT], 0, UINT32_MAX);
	else
		range(&a->field[F_PORT], (uint32_t)r->in_port,
		      (uint32_t)r->in_port);
	if (r->family != 0) {
		prefix(&a->field[F_SRC], r->src, r->src_len, words);
		prefix(&a->field[F_SRC + words], r->dst, r->dst_len, words);
	}
	range(&a->field[F_SRC + 2 * words], r->sport[0], r->sport[1]);
	range(&a->field[F_SRC + 2 * words + 1], r->dport[0], r->dport[1]);
}

/* A context of rules @p idx[0..m) (their positions in the whole list:
 * the priority), built; NULL and -errno when rte_acl refuses it. */
static int
build_part(const struct xnv_flow_rule *const *rules, const uint32_t *ids,
	   unsigned n, const unsigned *idx, unsigned m, int v6,
	   struct rte_acl_ctx **out)
{
	static unsigned gen;	/* context names must be unique */
	struct rte_acl_config cfg;
	struct rte_acl_param p;
	struct acl_rule6 a;
	char name[RTE_ACL_NAMESIZE];
	unsigned i;
	int rc = 0;

	layout(&cfg, v6);
	snprintf(name, sizeof(name), "xnv-acl%d-%u", v6 ? 6 : 4, gen++);
	p = (struct rte_acl_param){ .name = name,
		.socket_id = (int)rte_socket_id(),
		.rule_size = (uint32_t)RTE_ACL_RULE_SZ(cfg.num_fields),
		.max_rule_num = m };
	if ((*out = rte_acl_create(&p)) == NULL)
		return -ENOMEM;
	for (i = 0; i < m && rc == 0; i++) {
		to_acl(rules[idx[i]], v6, &a);
		/* rte_acl: the highest priority wins; ours is the order */
		a.data = (struct rte_acl_rule_data){ .category_mask = 1,
			.priority = (int32_t)(n - idx[i]),
			.userdata = ids[idx[i]] };
		rc = rte_acl_add_rules(*out, (struct rte_acl_rule *)&a, 1);
	}
	if (rc == 0)
		rc = rte_acl_build(*out, &cfg);
	if (rc < 0) {
		rte_acl_free(*out);
		*out = NULL;
	}
	return rc;
}

/*
 * Rules @p idx[0..m) into contexts appended to @p a's family @p v6, in
 * order.  rte_acl refuses a set whose tries outgrow its limits (random
 * prefixes and ranges over IPv6 addresses do that at about a thousand
 * rules): such a set is split in two halves, each built alone, down to
 * ACL_PART_MIN rules.  A packet is then looked up in each part in turn.
 */
static int
build_parts(const struct xnv_flow_rule *const *rules, const uint32_t *ids,
	    unsigned n, const unsigned *idx, unsigned m, int v6,
	    struct xnv_acl *a)
{
	struct rte_acl_ctx *ctx;
	int rc;

	if (a->n[v6] == ACL_PARTS_MAX)
		return -E2BIG;
	rc = build_part(rules, ids, n, idx, m, v6, &ctx);
	if (rc == 0) {
		a->ctx[v6][a->n[v6]++] = ctx;
		return 0;
	}
	if (rc == -EINVAL || m < 2 * ACL_PART_MIN)
		return rc;
	rc = build_parts(rules, ids, n, idx, m / 2, v6, a);
	return rc < 0 ? rc : build_parts(rules, ids, n, idx + m / 2,
					 m - m / 2, v6, a);
}

/* The contexts of one family (none when no rule applies to it). */
static int
build_one(const struct xnv_flow_rule *const *rules, const uint32_t *ids,
	  unsigned n, int v6, struct xnv_acl *a, char *err, size_t errlen)
{
	unsigned *idx = malloc(sizeof(*idx) * RTE_MAX(n, 1u)), i, m = 0;
	int rc;

	if (idx == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		if (rules[i]->family != (v6 ? 4 : 6))
			idx[m++] = i;
	rc = m > 0 ? build_parts(rules, ids, n, idx, m, v6, a) : 0;
	free(idx);
	if (rc < 0)
		snprintf(err, errlen, "cannot build the IPv%d rules (%u): %s%s",
			 v6 ? 6 : 4, m, strerror(-rc), rc == -E2BIG ?
			 " (rte_acl needs too many parts for them)" : "");
	return rc;
}

struct xnv_acl *
xnv_acl_build(const struct xnv_flow_rule *const *rules, const uint32_t *ids,
	      unsigned n, char *err, size_t errlen)
{
	struct xnv_acl *a = rte_zmalloc("xnv-acl", sizeof(*a), 0);

	if (a == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (build_one(rules, ids, n, 0, a, err, errlen) < 0 ||
	    build_one(rules, ids, n, 1, a, err, errlen) < 0) {
		xnv_acl_free(a);
		return NULL;
	}
	return a;
}

unsigned
xnv_acl_parts(const struct xnv_acl *a, int v6)
{
	return a != NULL ? a->n[v6 != 0] : 0;
}

void
xnv_acl_free(struct xnv_acl *a)
{
	if (a == NULL)
		return;
	unsigned f, i;

	for (f = 0; f < 2; f++)
		for (i = 0; i < a->n[f]; i++)
			rte_acl_free(a->ctx[f][i]);
	rte_free(a);
}

/* The fields every family has, from the key. */
#define COMMON(in, k, kind, port) do {					\
	(in)->proto = (k)->proto;					\
	(in)->vlan = rte_cpu_to_be_16((k)->vlan);			\
	(in)->l4 = rte_cpu_to_be_16((kind) == XNV_KEY_PORTS);		\
	(in)->in_port = rte_cpu_to_be_32(port);				\
	(in)->sport = (k)->sport;					\
	(in)->dport = (k)->dport;					\
} while (0)

/* Each of @p n inputs of family @p v6: the best match over the parts,
 * which hold better rules first (the first part that matches wins). */
static void
lookup(const struct xnv_acl *a, int v6, const uint8_t **d, unsigned n,
       uint32_t *res)
{
	const uint8_t *left[GNTS_BURST_MAX];
	uint32_t r[GNTS_BURST_MAX];
	unsigned at[GNTS_BURST_MAX], i, k, m = n, p;

	memset(res, 0, sizeof(*res) * n);
	if (n == 0 || a->n[v6] == 0)
		return;
	rte_acl_classify(a->ctx[v6][0], d, res, n, 1);
	for (p = 1; p < a->n[v6]; p++) {
		for (i = 0, m = 0; i < n; i++)
			if (res[i] == 0) {
				left[m] = d[i];
				at[m++] = i;
			}
		if (m == 0)
			return;
		rte_acl_classify(a->ctx[v6][p], left, r, m, 1);
		for (k = 0; k < m; k++)
			res[at[k]] = r[k];
	}
}

void
xnv_acl_classify(const struct xnv_acl *a, const struct xnv_flow_key *k,
		 const uint8_t *kind, unsigned n, unsigned in_port,
		 uint32_t *ids)
{
	struct in4 in4[GNTS_BURST_MAX];
	struct in6 in6[GNTS_BURST_MAX];
	const uint8_t *d4[GNTS_BURST_MAX], *d6[GNTS_BURST_MAX];
	uint32_t r4[GNTS_BURST_MAX], r6[GNTS_BURST_MAX];
	unsigned i, n4 = 0, n6 = 0, i4 = 0, i6 = 0;

	for (i = 0; i < n; i++) {
		ids[i] = 0;
		if (kind[i] == XNV_KEY_OTHER)
			continue;
		if (!k[i].v6) {
			COMMON(&in4[n4], &k[i], kind[i], in_port);
			memcpy(&in4[n4].src, k[i].src, 4);
			memcpy(&in4[n4].dst, k[i].dst, 4);
			d4[n4] = (const uint8_t *)&in4[n4];
			n4++;
		} else {
			COMMON(&in6[n6], &k[i], kind[i], in_port);
			memcpy(in6[n6].src, k[i].src, 16);
			memcpy(in6[n6].dst, k[i].dst, 16);
			d6[n6] = (const uint8_t *)&in6[n6];
			n6++;
		}
	}
	lookup(a, 0, d4, n4, r4);
	lookup(a, 1, d6, n6, r6);
	for (i = 0; i < n; i++)
		if (kind[i] != XNV_KEY_OTHER)
			ids[i] = k[i].v6 ? r6[i6++] : r4[i4++];
}
