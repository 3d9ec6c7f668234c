/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flow director: exact 5-tuple rules (IPv4 and IPv6) in an rte_hash, each
 * pointing at a chain version.  Looked up per burst, only when rules exist.
 * Keys come from flow_key.h.  Non-IP packets and fragments (no ports to
 * match) take the port's default chain.  Rules are added and removed at
 * run time through the control commands; a full table is an error and
 * keeps the rules it has.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>

#include "classify.h"
#include "core.h"

struct flow_rule {
	uint8_t used;
	uint16_t chain;
	uint64_t hits;
	struct xnv_flow_key key;
};

struct xnv_flows {
	struct rte_hash *h;
	unsigned n;
	struct flow_rule rules[XNV_MAX_FLOWS];
};

int
xnv_flows_create(struct xnv_core *c)
{
	struct rte_hash_parameters hp = {
		.name = "xnv-flows",
		.entries = XNV_MAX_FLOWS,
		.key_len = sizeof(struct xnv_flow_key),
		.hash_func = rte_hash_crc,
		.socket_id = (int)rte_socket_id(),
		/* Bucket overflow goes to an extension table, so every one
		 * of XNV_MAX_FLOWS keys fits whatever their hashes. */
		.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE,
	};

	c->flows = rte_zmalloc("xnv-flows", sizeof(*c->flows), 0);
	if (c->flows == NULL)
		return -ENOMEM;
	c->flows->h = rte_hash_create(&hp);
	if (c->flows->h == NULL) {
		rte_free(c->flows);
		c->flows = NULL;
		return -ENOMEM;
	}
	return 0;
}

void
xnv_flows_destroy(struct xnv_core *c)
{
	if (c->flows == NULL)
		return;
	rte_hash_free(c->flows->h);
	rte_free(c->flows);
	c->flows = NULL;
}

unsigned
xnv_flows_count(const struct xnv_core *c)
{
	return c->flows != NULL ? c->flows->n : 0;
}

void
xnv_flows_classify(struct xnv_core *c, struct rte_mbuf **m, unsigned n,
		   uint16_t *chain)
{
	struct xnv_flows *f = c->flows;
	struct xnv_flow_key keys[GNTS_BURST_MAX];
	const void *kp[GNTS_BURST_MAX];
	void *data[GNTS_BURST_MAX];
	unsigned idx[GNTS_BURST_MAX], i, j, k = 0;
	uint64_t hit = 0;

	for (i = 0; i < n; i++) {
		enum xnv_key_kind kind = xnv_flow_key(m[i], &keys[k]);

		/* Parsed once: the replica pick (service.c) takes this hash
		 * unless the NIC gave one (datapath.c keeps pv->hash). */
		if (!(m[i]->ol_flags & RTE_MBUF_F_RX_RSS_HASH))
			xnv_priv(m[i])->hash = xnv_flow_key_hash(&keys[k], kind);
		/* Not IP, or no ports to match: the port's default chain. */
		if (kind >= XNV_KEY_IP) {
			kp[k] = &keys[k];
			idx[k++] = i;
		}
	}
	for (j = 0; j < k; j += RTE_HASH_LOOKUP_BULK_MAX) {
		unsigned b = RTE_MIN(k - j, (unsigned)RTE_HASH_LOOKUP_BULK_MAX);

		if (rte_hash_lookup_bulk_data(f->h, &kp[j], b, &hit,
					      &data[j]) <= 0)
			continue;
		for (i = 0; i < b; i++) {
			struct flow_rule *r;

			if (!(hit & (1ULL << i)))
				continue;
			r = &f->rules[(uintptr_t)data[j + i]];
			r->hits++;
			chain[idx[j + i]] = r->chain;
		}
	}
}

static int
fail(char *err, size_t errlen, int rc, const char *fmt, const char *arg)
{
	snprintf(err, errlen, fmt, arg);
	return rc;
}

static int
parse_port(const char *v, uint16_t *out)
{
	char *end;
	unsigned long x = strtoul(v, &end, 10);

	if (*v == '\0' || *end != '\0' || x > 65535)
		return -1;
	*out = htons((uint16_t)x);	/* keys hold ports as on the wire */
	return 0;
}

static int
parse_proto(const char *v, uint8_t *out)
{
	char *end;
	unsigned long x;

	if (strcmp(v, "tcp") == 0)
		x = IPPROTO_TCP;
	else if (strcmp(v, "udp") == 0)
		x = IPPROTO_UDP;
	else if (strcmp(v, "icmp") == 0)
		x = IPPROTO_ICMP;
	else if (strcmp(v, "icmp6") == 0)
		x = IPPROTO_ICMPV6;
	else if ((x = strtoul(v, &end, 10)) > 255 || *v == '\0' || *end)
		return -1;
	*out = (uint8_t)x;
	return 0;
}

/* "proto=udp src=A dst=B sport=1 dport=2 chain=STEPS" -> key + chain. */
static int
parse_spec(struct xnv_core *c, const char *spec, struct xnv_flow_key *k,
	   struct xnv_chain *ch, char *err, size_t errlen)
{
	char buf[512], *tok, *save = NULL, *chain = NULL;
	int v4 = 0, v6 = 0, have = 0, rc;
	uint8_t a[16];

	memset(k, 0, sizeof(*k));
	if (strlen(spec) >= sizeof(buf))
		return fail(err, errlen, -EINVAL, "flow spec too long%s", "");
	strcpy(buf, spec);
	chain = strstr(buf, "chain=");
	if (chain == NULL)
		return fail(err, errlen, -EINVAL, "flow spec needs chain=STEPS%s",
			    "");
	*chain = '\0';
	chain += 6;
	for (tok = strtok_r(buf, " \t", &save); tok != NULL;
	     tok = strtok_r(NULL, " \t", &save)) {
		char *eq = strchr(tok, '=');

		if (eq == NULL)
			return fail(err, errlen, -EINVAL, "flow spec: '%s' is "
				    "not key=value", tok);
		*eq++ = '\0';
		if (strcmp(tok, "src") == 0 || strcmp(tok, "dst") == 0) {
			uint8_t *dst = tok[0] == 's' ? k->src : k->dst;

			if (inet_pton(AF_INET, eq, a) == 1) {
				memcpy(dst, a, 4);
				v4 = 1;
			} else if (inet_pton(AF_INET6, eq, a) == 1) {
				memcpy(dst, a, 16);
				v6 = 1;
			} else {
				return fail(err, errlen, -EINVAL, "flow spec: "
					    "'%s' is not an IPv4 or IPv6 "
					    "address", eq);
			}
			have |= tok[0] == 's' ? 1 : 2;
		} else if (strcmp(tok, "proto") == 0) {
			if (parse_proto(eq, &k->proto) < 0)
				return fail(err, errlen, -EINVAL, "flow spec: "
					    "bad proto '%s'", eq);
			have |= 4;
		} else if (strcmp(tok, "sport") == 0 ||
			   strcmp(tok, "dport") == 0) {
			if (parse_port(eq, tok[0] == 's' ? &k->sport :
				       &k->dport) < 0)
				return fail(err, errlen, -EINVAL, "flow spec: "
					    "bad port '%s'", eq);
		} else {
			return fail(err, errlen, -EINVAL, "flow spec: unknown "
				    "key '%s'", tok);
		}
	}
	if (have != 7)
		return fail(err, errlen, -EINVAL, "flow spec needs src=, dst= "
			    "and proto=%s", "");
	if (v4 && v6)
		return fail(err, errlen, -EINVAL, "flow spec mixes IPv4 and "
			    "IPv6%s", "");
	if ((k->sport || k->dport) && k->proto != IPPROTO_TCP &&
	    k->proto != IPPROTO_UDP)
		return fail(err, errlen, -EINVAL, "flow spec: sport/dport "
			    "apply only to tcp and udp%s", "");
	k->v6 = (uint8_t)v6;
	k->ethertype = v6 ? XNV_ETHER_IPV6 : XNV_ETHER_IPV4;
	rc = xnv_config_parse_chain(&c->cfg, chain, ch, err, errlen);
	if (rc == 0 && ch->n == 0)
		return fail(err, errlen, -EINVAL, "flow spec: the chain needs "
			    "at least one step%s", "");
	return rc;
}

int
xnv_flow_add(struct xnv_core *c, const char *spec, char *err, size_t errlen)
{
	struct xnv_flows *f = c->flows;
	struct xnv_chain ch;
	struct xnv_flow_key k;
	void *old;
	int rc, ch_id;
	unsigned i;

	rc = parse_spec(c, spec, &k, &ch, err, errlen);
	if (rc < 0)
		return rc;
	if (rte_hash_lookup_data(f->h, &k, &old) >= 0) {
		snprintf(err, errlen, "a rule for this flow exists (id %u)",
			 (unsigned)(uintptr_t)old + 1);
		return -EEXIST;
	}
	for (i = 0; i < XNV_MAX_FLOWS && f->rules[i].used; i++)
		;
	if (i == XNV_MAX_FLOWS) {
		snprintf(err, errlen, "flow table full (%d rules)",
			 XNV_MAX_FLOWS);
		return -ENOSPC;
	}
	ch_id = xnv_chain_new(c, &ch);
	if (ch_id < 0) {
		snprintf(err, errlen, "chain table full (%d versions in use)",
			 XNV_MAX_CHAINS);
		return ch_id;
	}
	rc = rte_hash_add_key_data(f->h, &k, (void *)(uintptr_t)i);
	if (rc < 0) {
		xnv_chain_unuse(c, (uint16_t)ch_id);
		snprintf(err, errlen, "flow table full (%s)", strerror(-rc));
		return rc;
	}
	f->rules[i] = (struct flow_rule){ .used = 1, .chain = (uint16_t)ch_id,
					  .key = k };
	f->n++;
	return (int)i + 1;
}

int
xnv_flow_del(struct xnv_core *c, uint32_t id, char *err, size_t errlen)
{
	struct xnv_flows *f = c->flows;
	struct flow_rule *r;

	if (id == 0 || id > XNV_MAX_FLOWS || !f->rules[id - 1].used) {
		snprintf(err, errlen, "no flow rule %u", id);
		return -ENOENT;
	}
	r = &f->rules[id - 1];
	rte_hash_del_key(f->h, &r->key);
	xnv_chain_unuse(c, r->chain);
	r->used = 0;
	f->n--;
	return 0;
}

int
xnv_flow_exists(const struct xnv_core *c, uint32_t id)
{
	return c->flows != NULL && id >= 1 && id <= XNV_MAX_FLOWS &&
	       c->flows->rules[id - 1].used;
}

int
xnv_flow_get(const struct xnv_core *c, uint32_t id,
	     struct xnv_flow_match *m, uint16_t *chain, uint64_t *hits)
{
	const struct flow_rule *r;
	int af;

	if (c->flows == NULL || id == 0 || id > XNV_MAX_FLOWS ||
	    !c->flows->rules[id - 1].used)
		return -ENOENT;
	r = &c->flows->rules[id - 1];
	af = r->key.v6 ? AF_INET6 : AF_INET;
	inet_ntop(af, r->key.src, m->src, sizeof(m->src));
	inet_ntop(af, r->key.dst, m->dst, sizeof(m->dst));
	m->proto = r->key.proto;
	m->sport = ntohs(r->key.sport);
	m->dport = ntohs(r->key.dport);
	*chain = r->chain;
	*hits = r->hits;
	return 0;
}
