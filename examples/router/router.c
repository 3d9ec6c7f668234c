/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * router: IPv4 and IPv6 forwarding by longest-prefix match (lpm.h).
 * Decrements the TTL / hop limit (IPv4 header checksum updated
 * incrementally), rewrites the MACs from a neighbour table and sends the
 * packet out of the route's port.  Routes and neighbours come from files;
 * see README.md for their format.
 *
 *   xnv-router --service rt -- --routes routes.txt --neigh neigh.txt
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "htab.h"
#include "lpm.h"
#include "nfmain.h"
#include "parse.h"
#include "pkt.h"
#include "rules.h"

#define MAX_PORTS      256
#define MAX_NEIGH      65536
#define MAX_ROUTES     (1u << 20)
#define LPM_MAX_NODES  (1u << 18)	/* 512 MiB at most per family */

enum {
	C_PACKETS, C_ROUTED, C_NO_ROUTE, C_TTL_EXPIRED, C_NO_NEIGH,
	C_BLACKHOLE, C_NOT_IP, C_MALFORMED, C_N
};
static const char *const counter_names[C_N] = {
	"packets", "routed", "no_route", "ttl_expired", "no_neighbour",
	"blackhole", "not_ip", "malformed",
};

struct neigh_key {
	uint8_t ver;
	uint8_t addr[16];
};

struct nexthop {
	uint8_t blackhole;	/* "drop" route */
	uint8_t connected;	/* no "via": the destination is the neighbour */
	uint16_t port;
	struct neigh_key via;
	uint8_t mac[6];
};

struct router {
	const char *routes_path, *neigh_path;
	struct lpm lpm4, lpm6;
	struct nexthop *nh;
	uint32_t n_nh, cap_nh;
	struct htab neigh;		/* neigh_key -> MAC */
	uint8_t port_mac[MAX_PORTS][6];
	uint8_t port_has_mac[MAX_PORTS];
	int max_port;			/* highest port a route names */
	int next;			/* --next: XNV_NEXT, not XNV_OUT */
	uint64_t c[C_N];
	uint64_t port_tx[MAX_PORTS];
};

static int
load_neigh(struct router *r)
{
	struct rfile rf;
	struct neigh_key k;
	uint8_t mac[6], *v;
	uint32_t port;
	const char *err;
	int n, is_new;

	if (rfile_open(&rf, r->neigh_path) < 0)
		return -1;
	while ((n = rfile_next(&rf)) > 0) {
		if (n == 3 && strcmp(rf.word[0], "port") == 0) {
			if ((err = parse_u32(rf.word[1], 0, MAX_PORTS - 1,
					     &port)) != NULL ||
			    (err = parse_mac(rf.word[2], mac)) != NULL)
				break;
			memcpy(r->port_mac[port], mac, 6);
			r->port_has_mac[port] = 1;
			continue;
		}
		if (n != 2) {
			err = "expected 'ADDR MAC' or 'port N MAC'";
			break;
		}
		memset(&k, 0, sizeof(k));
		if ((err = parse_addr(rf.word[0], &k.ver, k.addr)) != NULL ||
		    (err = parse_mac(rf.word[1], mac)) != NULL)
			break;
		if ((v = htab_insert(&r->neigh, &k, &is_new)) == NULL) {
			err = "too many neighbours";
			break;
		}
		if (!is_new) {
			err = "neighbour listed twice";
			break;
		}
		memcpy(v, mac, 6);
	}
	if (n > 0)
		n = rfile_error(&rf, "%s", err);
	rfile_close(&rf);
	return n;
}

/* Next hop of a route line, added to r->nh.  @return its index or -1. */
static int
add_nexthop(struct router *r, struct rfile *rf, const struct prefix *pfx)
{
	struct nexthop h = { 0 };
	const uint8_t *mac;
	const char *err;
	uint32_t port;
	int w = 1;

	if (rf->n_words == 2 && strcmp(rf->word[1], "drop") == 0) {
		h.blackhole = 1;
	} else {
		if (rf->n_words == 5 && strcmp(rf->word[1], "via") == 0) {
			if ((err = parse_addr(rf->word[2], &h.via.ver,
					      h.via.addr)) != NULL)
				return rfile_error(rf, "next hop '%s': %s",
						   rf->word[2], err);
			if (h.via.ver != pfx->ver)
				return rfile_error(rf, "next hop '%s' is not "
						   "IPv%u", rf->word[2], pfx->ver);
			if ((mac = htab_find(&r->neigh, &h.via)) == NULL)
				return rfile_error(rf, "next hop %s has no "
						   "neighbour entry in %s",
						   rf->word[2], r->neigh_path);
			memcpy(h.mac, mac, 6);
			w = 3;
		} else {
			h.connected = 1;
		}
		if (rf->n_words != w + 2 || strcmp(rf->word[w], "port") != 0)
			return rfile_error(rf, "expected 'PREFIX via ADDR port "
					   "N', 'PREFIX port N' or 'PREFIX drop'");
		if ((err = parse_u32(rf->word[w + 1], 0, MAX_PORTS - 1,
				     &port)) != NULL)
			return rfile_error(rf, "port '%s': %s", rf->word[w + 1],
					   err);
		if (!r->port_has_mac[port])
			return rfile_error(rf, "port %u has no 'port %u MAC' "
					   "line in %s", port, port,
					   r->neigh_path);
		h.port = (uint16_t)port;
		if ((int)port > r->max_port)
			r->max_port = (int)port;
	}
	if (r->n_nh == r->cap_nh) {
		uint32_t cap = r->cap_nh ? r->cap_nh * 2 : 64;
		struct nexthop *nh = realloc(r->nh, cap * sizeof(*nh));

		if (nh == NULL || cap > LPM_VALUE_MAX)
			return rfile_error(rf, "too many routes");
		r->nh = nh;
		r->cap_nh = cap;
	}
	r->nh[r->n_nh] = h;
	return (int)r->n_nh++;
}

static int
load_routes(struct router *r)
{
	struct htab seen;		/* prefixes so far: no duplicates */
	struct rfile rf;
	struct prefix pfx;
	const char *err;
	int n, nh, rc, is_new;

	if (htab_init(&seen, MAX_ROUTES, sizeof(pfx), 0) < 0)
		return -1;
	if (rfile_open(&rf, r->routes_path) < 0) {
		htab_free(&seen);
		return -1;
	}
	while ((n = rfile_next(&rf)) > 0) {
		memset(&pfx, 0, sizeof(pfx));
		if ((err = parse_prefix(rf.word[0], &pfx)) != NULL) {
			n = rfile_error(&rf, "bad prefix '%s': %s", rf.word[0],
					err);
			break;
		}
		if (htab_insert(&seen, &pfx, &is_new) == NULL) {
			n = rfile_error(&rf, "too many routes");
			break;
		}
		if (!is_new) {
			n = rfile_error(&rf, "duplicate route %s", rf.word[0]);
			break;
		}
		if ((nh = add_nexthop(r, &rf, &pfx)) < 0) {
			n = -1;
			break;
		}
		rc = lpm_add(pfx.ver == 4 ? &r->lpm4 : &r->lpm6, pfx.addr,
			     pfx.len, (uint32_t)nh);
		if (rc < 0) {
			n = rfile_error(&rf, "%s: too many routes", rf.word[0]);
			break;
		}
	}
	rfile_close(&rf);
	htab_free(&seen);
	return n;
}

static int
on_opt(void *ctx, int c, const char *arg)
{
	struct router *r = ctx;

	if (c == 'r')
		r->routes_path = arg;
	else if (c == 'n')
		r->neigh_path = arg;
	else
		r->next = 1;
	return 0;
}

static int
load(void *ctx)
{
	struct router *r = ctx;

	if (r->routes_path == NULL || r->neigh_path == NULL) {
		fprintf(stderr, "xnv-router: --routes FILE and --neigh FILE "
			"are required (see -- --help)\n");
		return NF_USAGE;
	}
	r->max_port = -1;
	if (lpm_init(&r->lpm4, 32, LPM_MAX_NODES) < 0 ||
	    lpm_init(&r->lpm6, 128, LPM_MAX_NODES) < 0 ||
	    htab_init(&r->neigh, MAX_NEIGH, sizeof(struct neigh_key), 6) < 0) {
		fprintf(stderr, "xnv-router: out of memory\n");
		return -1;
	}
	return load_neigh(r) < 0 || load_routes(r) < 0 ? -1 : 0;
}

static int
attached(void *ctx, struct xnv_nf *nf)
{
	struct router *r = ctx;

	if (r->max_port >= xnv_nf_port_count(nf)) {
		fprintf(stderr, "xnv-router: %s names port %d but xnv-core has "
			"ports 0..%d\n", r->routes_path, r->max_port,
			xnv_nf_port_count(nf) - 1);
		return -1;
	}
	return 0;
}

static xnv_action_t
route(struct xnv_pkt *pkt, void *ctx)
{
	struct router *r = ctx;
	uint8_t *p = xnv_pkt_data(pkt), *ip, old[2];
	const struct nexthop *h;
	const uint8_t *mac;
	struct pkt_info pi;
	struct neigh_key k;
	uint32_t v;

	r->c[C_PACKETS]++;
	switch (pkt_parse(p, xnv_pkt_len(pkt), &pi)) {
	case PKT_NOT_IP:
		r->c[C_NOT_IP]++;
		return XNV_DROP;
	case PKT_BAD_IP:
		r->c[C_MALFORMED]++;
		return XNV_DROP;
	}
	if (lpm_lookup(pi.ver == 4 ? &r->lpm4 : &r->lpm6,
		       pkt_addr(p, &pi, PKT_DST), &v) < 0) {
		r->c[C_NO_ROUTE]++;
		return XNV_DROP;
	}
	h = &r->nh[v];
	if (h->blackhole) {
		r->c[C_BLACKHOLE]++;
		return XNV_DROP;
	}
	ip = p + pi.l3_off;
	if (ip[pi.ver == 4 ? 8 : 7] <= 1) {	/* TTL / hop limit */
		r->c[C_TTL_EXPIRED]++;
		return XNV_DROP;
	}
	mac = h->mac;
	if (h->connected) {
		memset(&k, 0, sizeof(k));
		k.ver = pi.ver;
		memcpy(k.addr, pkt_addr(p, &pi, PKT_DST), pkt_addr_len(pi.ver));
		if ((mac = htab_find(&r->neigh, &k)) == NULL) {
			r->c[C_NO_NEIGH]++;
			return XNV_DROP;
		}
	}
	if (pi.ver == 4) {
		memcpy(old, ip + 8, 2);		/* TTL, protocol: one word */
		ip[8]--;
		csum_update(ip + 10, old, ip + 8, 2);
	} else {
		ip[7]--;			/* no IPv6 header checksum */
	}
	memcpy(p, mac, 6);
	memcpy(p + 6, r->port_mac[h->port], 6);
	r->c[C_ROUTED]++;
	r->port_tx[h->port]++;
	return r->next ? XNV_NEXT : XNV_OUT(h->port);
}

static void
report(void *ctx, FILE *out)
{
	struct router *r = ctx;
	int i;

	nf_counters(out, "router", counter_names, r->c, C_N);
	for (i = 0; i <= r->max_port; i++)
		fprintf(out, "router: port %d tx %llu\n", i,
			(unsigned long long)r->port_tx[i]);
}

static void
fini(void *ctx)
{
	struct router *r = ctx;

	lpm_free(&r->lpm4);
	lpm_free(&r->lpm6);
	htab_free(&r->neigh);
	free(r->nh);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "routes", required_argument, NULL, 'r' },
		{ "neigh", required_argument, NULL, 'n' },
		{ "next", no_argument, NULL, 'x' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct nf_app app = {
		.name = "router",
		.summary = "IPv4/IPv6 longest-prefix-match router",
		.usage =
		"  --routes FILE  routes: 'PREFIX via ADDR port N', 'PREFIX port N'\n"
		"                 (connected) or 'PREFIX drop', one a line\n"
		"  --neigh FILE   neighbours: 'ADDR MAC', and 'port N MAC' for\n"
		"                 the router's own MAC on each port it uses\n"
		"  --next         routed packets go on along the chain (XNV_NEXT)\n"
		"                 instead of out of the route's port: for chains\n"
		"                 where NFs follow the router\n",
		.opts = opts, .opt = on_opt, .load = load, .attached = attached,
		.handler = route, .report = report, .fini = fini,
	};
	static struct router r;

	return nf_main(argc, argv, &app, &r);
}
