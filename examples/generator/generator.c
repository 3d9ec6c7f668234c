/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * generator: originates UDP/IPv4 packets from the trust group's pool and
 * sends them out of a port (or to a service).  Packets it receives are
 * passed on (XNV_NEXT), so it can also sit in a chain.
 *
 *   xnv-generator --service gen --alloc 256 -- --count 10000 --size 64 \
 *       --flows 16 --out 1 [--to-service ID] [--rate PPS] [--max-tries N]
 *
 * Each packet carries a 32-bit sequence number and a timestamp after the
 * UDP header.  Exits 0 once --count packets are sent (after pushing them);
 * 1 if --max-tries allocations in a row found no buffer.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xnv/nf.h>

#include "nfmain.h"

struct opts {
	unsigned long count, size, flows, rate, max_tries;
	xnv_action_t action;
};

static uint16_t
csum(const uint8_t *p, size_t n)
{
	uint32_t s = 0;

	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* Ethernet + IPv4 + UDP, then seq (u32) and send time (u64 ns). */
static void
build(uint8_t *p, unsigned long size, unsigned long seq, unsigned flow)
{
	static const uint8_t mac[12] = { 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1 };
	unsigned ip_len = (unsigned)size - 14, udp_len = ip_len - 20;
	struct timespec ts;
	uint64_t ns;

	memset(p, 0, size);
	memcpy(p, mac, 12);
	p[12] = 0x08;
	p[14] = 0x45;
	p[16] = (uint8_t)(ip_len >> 8);
	p[17] = (uint8_t)ip_len;
	p[22] = 64;
	p[23] = 17;
	memcpy(p + 26, (uint8_t[]){ 10, 0, (uint8_t)(flow >> 8), (uint8_t)flow }, 4);
	memcpy(p + 30, (uint8_t[]){ 192, 0, 2, 1 }, 4);
	uint16_t c = csum(p + 14, 20);
	p[24] = (uint8_t)(c >> 8);
	p[25] = (uint8_t)c;
	p[34] = (uint8_t)((1024 + flow) >> 8);
	p[35] = (uint8_t)(1024 + flow);
	p[36] = 0x23;
	p[37] = 0x28;		/* port 9000 */
	p[38] = (uint8_t)(udp_len >> 8);
	p[39] = (uint8_t)udp_len;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	for (int i = 0; i < 4; i++)
		p[42 + i] = (uint8_t)(seq >> (24 - 8 * i));
	for (int i = 0; i < 8; i++)
		p[46 + i] = (uint8_t)(ns >> (56 - 8 * i));
}

static int
parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "count", 1, NULL, 'c' }, { "size", 1, NULL, 's' },
		{ "flows", 1, NULL, 'f' }, { "out", 1, NULL, 'o' },
		{ "to-service", 1, NULL, 't' }, { "rate", 1, NULL, 'r' },
		{ "max-tries", 1, NULL, 'm' },
		{ "help", 0, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct opts){ .count = 1000, .size = 64, .flows = 1,
			    .action = XNV_OUT(0) };
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		unsigned long v;
		char *e;

		if (c == '?')
			fprintf(stderr, "generator: unknown or incomplete "
				"option '%s'; ", argv[optind - 1]);
		if (c == 'h' || c == '?') {
			fprintf(c == 'h' ? stdout : stderr, "generator options "
				"(after --): --count N --size 60..1514 --flows N "
				"--out PORT | --to-service ID [--rate PPS] "
				"[--max-tries N]\n");
			return c == 'h' ? 1 : -1;
		}
		v = strtoul(optarg, &e, 10);
		if (*optarg == '\0' || *e != '\0') {
			fprintf(stderr, "generator: bad number '%s'\n", optarg);
			return -1;
		}
		switch (c) {
		case 'c': o->count = v; break;
		case 's': o->size = v; break;
		case 'f': o->flows = v; break;
		case 'o': o->action = XNV_OUT(v); break;
		case 't': o->action = XNV_TO_SERVICE(v); break;
		case 'r': o->rate = v; break;
		case 'm': o->max_tries = v; break;
		}
	}
	if (o->size < 60 || o->size > 1514 || o->flows == 0 ||
	    o->flows > 65535) {
		fprintf(stderr, "generator: --size 60..1514, --flows 1..65535\n");
		return -1;
	}
	return 0;
}

static xnv_action_t
pass(struct xnv_pkt *pkt, void *ctx)
{
	(void)pkt;
	(void)ctx;
	return XNV_NEXT;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int
main(int argc, char **argv)
{
	struct xnv_nf *nf;
	struct xnv_pkt pkt;
	struct opts o;
	unsigned long sent = 0, dry = 0;
	double t0;
	int dd = nf_dashdash(argc, argv), n, rc;

	/* Its own options first (after "--"): -- --help needs no core. */
	n = dd < argc ? dd : argc - 1;
	rc = parse(argc - n, argv + n, &o);
	if (rc != 0)
		return rc > 0 ? 0 : 2;
	n = xnv_nf_init(dd, argv, &nf);
	if (n < 0)
		return xnv_nf_exit_status(n);
	t0 = now_s();
	while (sent < o.count) {
		if (o.rate && sent >= (now_s() - t0) * (double)o.rate) {
			/* Ahead of the rate: push what is pending, then sleep
			 * until the next packet is due rather than spin. */
			double ahead = (double)sent / (double)o.rate -
				       (now_s() - t0);

			rc = xnv_nf_poll(nf, pass, NULL);
			if (rc >= 0 && ahead > 20e-6) {
				/* At most 100 ms: the poll above is also the
				 * heartbeat the core watches (<xnv/nf.h>). */
				struct timespec ts = {
					.tv_nsec = (long)((ahead < 0.1 ? ahead
							   : 0.1) * 1e9),
				};
				nanosleep(&ts, NULL);
			}
		} else if ((rc = xnv_pkt_alloc(nf, &pkt)) == 0) {
			dry = 0;
			build(xnv_pkt_append(&pkt, (uint32_t)o.size), o.size,
			      sent, (unsigned)(sent % o.flows));
			rc = xnv_pkt_send(nf, &pkt, o.action);
			sent += rc == 0;
		} else if (rc == -ENOBUFS) {
			if (o.max_tries && ++dry >= o.max_tries) {
				fprintf(stderr, "generator: no buffer after %lu "
					"tries (started without --alloc?)\n",
					dry);
				rc = -ENOBUFS;
				break;
			}
			rc = xnv_nf_poll(nf, pass, NULL);	/* let it refill */
		}
		if (rc < 0)
			break;
	}
	if (rc >= 0)
		rc = xnv_nf_flush(nf);
	fprintf(stderr, "generator: sent %lu packets of %lu B in %.3f s\n",
		sent, o.size, now_s() - t0);
	xnv_nf_close(nf);
	return rc < 0 ? 1 : 0;
}
