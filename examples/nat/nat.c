/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nat: source NAT (NAPT) for IPv4 TCP and UDP.  A flow from an internal
 * address to the outside leaves from the external address and a port
 * allocated for its (protocol, internal address, internal port); replies
 * to that port are translated back.  Checksums are updated incrementally.
 * A mapping idle for --timeout seconds is freed.  See README.md.
 *
 *   xnv-nat --service nat -- --external 203.0.113.1 \
 *           --internal 192.168.0.0/16 [--ports 1024-65535] [--timeout 60]
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "htab.h"
#include "nfmain.h"
#include "parse.h"
#include "pkt.h"

#define MAX_INTERNAL  16

enum {
	C_PACKETS, C_OUT, C_IN, C_PASSED, C_NEW_MAPPINGS, C_EXPIRED,
	C_NO_PORT, C_NO_MAPPING, C_UNTRANSLATABLE, C_MALFORMED, C_N
};
static const char *const counter_names[C_N] = {
	"packets", "out", "in", "passed", "new_mappings", "expired", "no_port",
	"no_mapping", "untranslatable", "malformed",
};

/* An internal endpoint: what a mapping is allocated for. */
struct endpoint {
	uint8_t proto;
	uint8_t pad;
	uint16_t port;
	uint8_t addr[4];
};

_Static_assert(sizeof(struct endpoint) == 8 &&
	       offsetof(struct endpoint, port) == 2 &&
	       offsetof(struct endpoint, addr) == 4 &&
	       __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "an endpoint is one little-endian word: endpoint_set()");

/* @p e as one 8-byte store of a word built in registers: the table hashes
 * it with one 8-byte load, which a byte, a half-word and a word store
 * could not be forwarded to (a third of the lookup's hash waited on it). */
static inline void
endpoint_set(struct endpoint *e, uint8_t proto, uint16_t port,
	     const uint8_t *addr)
{
	uint32_t a;
	uint64_t w;

	memcpy(&a, addr, 4);
	w = proto | (uint64_t)port << 16 | (uint64_t)a << 32;
	memcpy(e, &w, sizeof(w));
}

struct mapping {
	struct endpoint in;	/* in.proto == 0: the port is free */
	uint64_t last_ns;
};

/* Ports of one protocol: mappings by external port, and a FIFO of the
 * free ones (a freed port goes to the back: reused as late as possible). */
struct portmap {
	struct mapping *map;	/* [port - lo] */
	uint16_t *free;		/* ring of n_ports */
	uint32_t head, n_free, sweep_at;
	uint64_t swept_ns;	/* the sweep's clock (sweep_budget()) */
};

struct nat {
	uint8_t ext[4];
	struct prefix internal[MAX_INTERNAL];
	unsigned n_internal;
	uint32_t lo, hi, n_ports;
	uint64_t timeout_ns, now;
	struct portmap pm[2];		/* TCP, UDP */
	struct htab by_in;		/* struct endpoint -> external port */
	uint64_t c[C_N];
};

static struct portmap *
portmap(struct nat *n, uint8_t proto)
{
	return &n->pm[proto == PROTO_UDP];
}

static void
free_port(struct nat *n, struct portmap *pm, uint32_t i)
{
	htab_remove(&n->by_in, &pm->map[i].in);
	memset(&pm->map[i], 0, sizeof(pm->map[i]));
	pm->free[(pm->head + pm->n_free++) % n->n_ports] = (uint16_t)i;
}

static int
idle(const struct nat *n, const struct mapping *m)
{
	return n->now - m->last_ns > n->timeout_ns;
}

/* Free the idle mappings among @p budget ports from the sweep cursor. */
static void
sweep(struct nat *n, struct portmap *pm, uint32_t budget)
{
	for (; budget > 0; budget--) {
		uint32_t i = pm->sweep_at;

		pm->sweep_at = (i + 1) % n->n_ports;
		if (pm->map[i].in.proto != 0 && idle(n, &pm->map[i])) {
			free_port(n, pm, i);
			nf_count(n->c, C_EXPIRED, 1);
		}
	}
}

/* External port of internal endpoint @p e, allocated if needed.
 * @return the port, or 0 when none is free. */
static uint16_t
map_out(struct nat *n, const struct endpoint *e)
{
	struct portmap *pm = portmap(n, e->proto);
	uint16_t *ext = htab_find(&n->by_in, e);
	struct mapping *m;
	uint32_t i;
	int is_new;

	if (ext != NULL) {
		m = &pm->map[*ext - n->lo];
		if (!idle(n, m)) {
			m->last_ns = n->now;
			return *ext;
		}
		free_port(n, pm, *ext - n->lo);
		nf_count(n->c, C_EXPIRED, 1);
	}
	if (pm->n_free == 0)
		sweep(n, pm, n->n_ports);	/* out of ports: look at all */
	if (pm->n_free == 0)
		return 0;
	i = pm->free[pm->head];
	pm->head = (pm->head + 1) % n->n_ports;
	pm->n_free--;
	m = &pm->map[i];
	m->in = *e;
	m->last_ns = n->now;
	ext = htab_insert(&n->by_in, e, &is_new);	/* room: one per port */
	*ext = (uint16_t)(n->lo + i);
	nf_count(n->c, C_NEW_MAPPINGS, 1);
	return *ext;
}

static int
is_internal(const struct nat *n, const uint8_t *addr)
{
	for (unsigned i = 0; i < n->n_internal; i++)
		if (prefix_match(&n->internal[i], 4, addr))
			return 1;
	return 0;
}

/* From inside to anywhere but the external address. */
static xnv_action_t
translate_out(struct nat *n, uint8_t *p, struct pkt_info *pi,
	      const uint8_t *src)
{
	struct endpoint e;
	uint16_t port;

	if (pi->kind != PKT_IP || !pi->has_ports) {
		nf_count(n->c, C_UNTRANSLATABLE, 1);	/* never leak inside addresses */
		return XNV_DROP;
	}
	endpoint_set(&e, pi->proto, pi->sport, src);
	if ((port = map_out(n, &e)) == 0) {
		nf_count(n->c, C_NO_PORT, 1);
		return XNV_DROP;
	}
	pkt_set_addr_port(p, pi, PKT_SRC, n->ext, port);
	nf_count(n->c, C_OUT, 1);
	return XNV_NEXT;
}

/* Before a burst (nfmain.h): the clock, read once for all its packets,
 * and each protocol's ports swept as far as the time since the last
 * sweep earned (all of them once per sweep_period()). */
static void
burst_start(void *ctx, struct xnv_pkt *pkts, unsigned n)
{
	struct nat *nt = ctx;
	unsigned i;

	(void)pkts, (void)n;
	nt->now = coarse_ns();
	for (i = 0; i < 2; i++)
		sweep(nt, &nt->pm[i], sweep_budget(&nt->pm[i].swept_ns,
						  nt->now,
						  sweep_period(nt->timeout_ns),
						  nt->n_ports));
}

static xnv_action_t
translate(struct xnv_pkt *pkt, void *ctx)
{
	struct nat *n = ctx;
	uint8_t *p = xnv_pkt_data(pkt), *src, *dst;
	struct pkt_info pi;
	struct mapping *m;

	nf_count(n->c, C_PACKETS, 1);
	if (pkt_parse(p, xnv_pkt_len(pkt), &pi) == PKT_BAD_IP) {
		nf_count(n->c, C_MALFORMED, 1);		/* no addresses to read */
		return XNV_DROP;
	}
	if (pi.kind == PKT_NOT_IP || pi.ver != 4)
		goto pass;
	src = pkt_addr(p, &pi, PKT_SRC);
	dst = pkt_addr(p, &pi, PKT_DST);
	if (memcmp(dst, n->ext, 4) != 0) {
		if (!is_internal(n, src))
			goto pass;
		return translate_out(n, p, &pi, src);
	}
	if (pi.kind != PKT_IP || !pi.has_ports || pi.dport < n->lo ||
	    pi.dport > n->hi) {
		nf_count(n->c, C_NO_MAPPING, 1);
		return XNV_DROP;
	}
	m = &portmap(n, pi.proto)->map[pi.dport - n->lo];
	if (m->in.proto != pi.proto || idle(n, m)) {
		if (m->in.proto == pi.proto) {
			free_port(n, portmap(n, pi.proto), pi.dport - n->lo);
			nf_count(n->c, C_EXPIRED, 1);
		}
		nf_count(n->c, C_NO_MAPPING, 1);
		return XNV_DROP;
	}
	m->last_ns = n->now;
	pkt_set_addr_port(p, &pi, PKT_DST, m->in.addr, m->in.port);
	nf_count(n->c, C_IN, 1);
	return XNV_NEXT;
pass:
	nf_count(n->c, C_PASSED, 1);
	return XNV_NEXT;
}

static int
on_opt(void *ctx, int c, const char *arg)
{
	struct nat *n = ctx;
	const char *err = NULL, *what = "";
	uint8_t ver, addr[16];
	uint32_t v;

	switch (c) {
	case 'e':
		what = "--external";
		err = parse_addr(arg, &ver, addr);
		if (err == NULL && ver != 4)
			err = "IPv4 only (NAT44)";
		memcpy(n->ext, addr, 4);
		break;
	case 'i':
		what = "--internal";
		if (n->n_internal == MAX_INTERNAL)
			err = "too many (16 at most)";
		else if ((err = parse_prefix(arg, &n->internal[n->n_internal])) == NULL &&
			 n->internal[n->n_internal++].ver != 4)
			err = "IPv4 only (NAT44)";
		break;
	case 'p':
		what = "--ports";
		err = parse_range(arg, 65535, &n->lo, &n->hi);
		if (err == NULL && n->lo == 0)
			err = "port 0 cannot be used";
		break;
	case 't':
		what = "--timeout";
		err = parse_u32(arg, 1, 86400, &v);
		n->timeout_ns = (uint64_t)v * 1000000000u;
		break;
	}
	if (err != NULL)
		fprintf(stderr, "xnv-nat: %s '%s': %s\n", what, arg, err);
	return err != NULL ? -1 : 0;
}

static int
load(void *ctx)
{
	struct nat *n = ctx;

	if (n->n_internal == 0 || n->ext[0] == 0) {
		fprintf(stderr, "xnv-nat: --external ADDR and --internal PREFIX "
			"are required (see -- --help)\n");
		return NF_USAGE;
	}
	n->n_ports = n->hi - n->lo + 1;
	for (int i = 0; i < 2; i++) {
		struct portmap *pm = &n->pm[i];

		pm->map = calloc(n->n_ports, sizeof(*pm->map));
		pm->free = malloc(n->n_ports * sizeof(*pm->free));
		if (pm->map == NULL || pm->free == NULL)
			goto nomem;
		for (uint32_t p = 0; p < n->n_ports; p++)
			pm->free[p] = (uint16_t)p;
		pm->n_free = n->n_ports;
	}
	if (htab_init(&n->by_in, 2 * n->n_ports, sizeof(struct endpoint),
		      sizeof(uint16_t)) == 0)
		return 0;
nomem:
	fprintf(stderr, "xnv-nat: out of memory\n");
	return -1;
}

/* Where its counters are, for nf_main to publish them. */
static uint64_t *
counters(void *ctx)
{
	return ((struct nat *)ctx)->c;
}

static void
report(void *ctx, FILE *out)
{
	struct nat *n = ctx;

	nf_counters(out, "nat", counter_names, n->c, C_N);
	fprintf(out, "nat: mappings tcp %u udp %u\n",
		n->n_ports - n->pm[0].n_free, n->n_ports - n->pm[1].n_free);
}

static void
fini(void *ctx)
{
	struct nat *n = ctx;

	for (int i = 0; i < 2; i++) {
		free(n->pm[i].map);
		free(n->pm[i].free);
	}
	htab_free(&n->by_in);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "external", required_argument, NULL, 'e' },
		{ "internal", required_argument, NULL, 'i' },
		{ "ports", required_argument, NULL, 'p' },
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct nf_app app = {
		.name = "nat",
		.summary = "source NAT (NAPT) for IPv4 TCP/UDP",
		.usage =
		"  --external ADDR   the address internal flows leave from\n"
		"  --internal PREFIX internal addresses (repeatable)\n"
		"  --ports LO-HI     external ports handed out (1024-65535)\n"
		"  --timeout S       an idle mapping is freed after S s (60)\n",
		.opts = opts, .opt = on_opt, .load = load,
		.handler = translate, .burst_start = burst_start,
		.report = report, .fini = fini,
		.counter_names = counter_names, .n_counters = C_N,
		.counters = counters,
	};
	static struct nat n = {
		.lo = 1024, .hi = 65535, .timeout_ns = 60000000000ull,
	};

	return nf_main(argc, argv, &app, &n);
}
