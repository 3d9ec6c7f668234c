/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flow-cost: what flow rules cost each packet on the core's data path,
 * away from port I/O and NFs: xnv_flows_classify() (dom0-core/flow_path.c)
 * on the packets of a pcap, bursts of 32, with the rules of a file (one
 * per line, the match fields of `xnv-ctl flow add`, no `chain=`).
 *
 *   flow-cost [EAL args] -- PCAP RULES [ROUNDS]
 *
 * The command line splits as xnv-core's does (dom0-core/eal_args.h: no
 * `--`, no EAL args; the same memory defaults).  Exit status
 * (xnv_nf_exit_status(), as the NFs): 0, or after -h / --help; 2 for a
 * usage error (one line); 1 for any other error.
 *
 * Prints the best (lowest) ns per packet over ROUNDS rounds (default 500) of 2^10
 * bursts each: the best round is the one nothing interrupted, so the
 * figure holds on a busy machine, where rates do not.  A rule set with
 * nothing in it prints the cost of a burst that takes no rule path at
 * all (0: the core does not classify without rules).
 */
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_mbuf.h>

#include <xnv/nf.h>

#include "core.h"
#include "bench_args.h"
#include "eal_args.h"
#include "flow.h"
#include "flow_pvt.h"

#define BURST 32u
#define MAX_PKTS 4096u
#define ROUND_BURSTS (1u << 10)
#define MAX_ROUNDS 1000000u

int xnv_logtype;	/* the core's (main.c): its log lines go there */

static int
port_index(void *arg, const char *name)
{
	(void)arg;
	return strcmp(name, "in") == 0 ? 0 : -1;
}

static const char *
port_name(void *arg, unsigned idx)
{
	(void)arg;
	return idx == 0 ? "in" : NULL;
}

static unsigned
load_pcap(const char *path, struct rte_mempool *mp, struct rte_mbuf **m)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	pcap_t *p = pcap_open_offline(path, err);
	unsigned n = 0;

	if (p == NULL) {
		fprintf(stderr, "flow-cost: %s: %s\n", path, err);
		exit(1);
	}
	while (n < MAX_PKTS && pcap_next_ex(p, &h, &data) == 1) {
		char *d;

		if ((m[n] = rte_pktmbuf_alloc(mp)) == NULL ||
		    (d = rte_pktmbuf_append(m[n], (uint16_t)h->caplen)) == NULL) {
			fprintf(stderr, "flow-cost: packet %u does not fit\n", n);
			exit(1);
		}
		memcpy(d, data, h->caplen);
		n++;
	}
	pcap_close(p);
	return n;
}

/* The rules of @p path into the table's slots, then in force. */
static unsigned
load_rules(const char *path, struct xnv_flows *f)
{
	struct xnv_flow_ports ports = { port_index, port_name, NULL };
	char line[512], err[256] = "";
	FILE *fp = fopen(path, "r");
	unsigned n = 0;

	if (fp == NULL) {
		fprintf(stderr, "flow-cost: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	while (fgets(line, sizeof(line), fp) != NULL) {
		struct flow_slot *s = &f->slot[n];

		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '\0' || line[0] == '#')
			continue;
		if (n == XNV_MAX_FLOWS ||
		    xnv_flow_rule_parse(line, &ports, &s->r, err,
					sizeof(err)) < 0) {
			fprintf(stderr, "flow-cost: rule %u: %s\n", n + 1,
				n == XNV_MAX_FLOWS ? "too many" : err);
			exit(1);
		}
		s->used = 1;
		s->seq = ++f->seq;
		s->chain = 1;
		n++;
	}
	fclose(fp);
	if (n > 0 && xnv_flows_replace(f, err, sizeof(err)) < 0) {
		fprintf(stderr, "flow-cost: %s\n", err);
		exit(1);
	}
	return n;
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: flow-cost [EAL args] -- PCAP RULES [ROUNDS]\n"
		"  PCAP    packets to classify (the first %u)\n"
		"  RULES   flow rules, one a line (xnv-ctl flow add's fields, "
		"no chain=)\n"
		"  ROUNDS  rounds of %u bursts of %u, the best one printed "
		"(default 500)\n"
		"Exit status: 0, 2 for a usage error, 1 for any other error.\n",
		MAX_PKTS, ROUND_BURSTS, BURST);
}

/* The args after "--" (@p argv[0] is the "--" or the program): 0,
 * -EAGAIN (-h / --help said) or -EINVAL (a usage error said in one line). */
static int
parse_args(int argc, char **argv, const char **pcap, const char **rules,
	   unsigned *rounds)
{
	int rc = bench_no_options("flow-cost", argc, argv, usage,
				  "EAL args go before '--'");

	if (rc != 0)
		return rc;
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "flow-cost: expected PCAP RULES [ROUNDS] "
			"after '--' (see --help)\n");
		return -EINVAL;
	}
	*pcap = argv[1];
	*rules = argv[2];
	if (argc == 4)
		return bench_rounds("flow-cost", argv[3], MAX_ROUNDS, rounds);
	return 0;
}

/* Rounds of xnv_flows_classify() over the pcap with the rules; the best
 * round's ns per packet on stdout.  0, or 1 after a line on stderr. */
static int
measure(struct xnv_core *c, const char *pcap, const char *rules_path,
	unsigned rounds)
{
	static struct rte_mbuf *m[MAX_PKTS];
	uint16_t chain[BURST];
	struct rte_mempool *mp;
	unsigned n, rules, r, k;
	double best = 1e9;
	char err[256] = "";

	mp = rte_pktmbuf_pool_create("flow-cost", 2 * MAX_PKTS, 0,
				     sizeof(struct xnv_mbuf_priv),
				     RTE_MBUF_DEFAULT_BUF_SIZE,
				     (int)rte_socket_id());
	if (mp == NULL || xnv_flows_create(c, err, sizeof(err)) < 0) {
		fprintf(stderr, "flow-cost: %s\n", mp ? err : "no mempool");
		return 1;
	}
	n = load_pcap(pcap, mp, m) / BURST * BURST;
	rules = load_rules(rules_path, c->flows);
	if (n == 0) {
		fprintf(stderr, "flow-cost: fewer than %u packets\n", BURST);
		return 1;
	}
	for (r = 0; r < rounds; r++) {
		uint64_t t0 = rte_rdtsc_precise(), dt;

		for (k = 0; k < ROUND_BURSTS; k++)
			if (rules > 0)
				xnv_flows_classify(c, 0, &m[k * BURST % n],
						   BURST, 0, chain);
		dt = rte_rdtsc_precise() - t0;
		best = RTE_MIN(best, (double)dt * 1e9 / rte_get_tsc_hz() /
			       (ROUND_BURSTS * BURST));
	}
	printf("flow-cost: %u rules, %u packets: %.2f ns per packet "
	       "(best of %u rounds)\n", rules, n, best, rounds);
	return 0;
}

int
main(int argc, char **argv)
{
	struct xnv_core *c;
	unsigned rounds = 500;
	char **eal_argv, **app_argv;
	const char *pcap, *rules_path;
	int eal_argc, app_argc, rc;

	if (xnv_split_args(argc, argv, &eal_argc, &eal_argv, &app_argc,
			   &app_argv) < 0)
		return 1;
	rc = parse_args(app_argc, app_argv, &pcap, &rules_path, &rounds);
	if (rc < 0) {
		free(eal_argv);
		return xnv_nf_exit_status(rc);
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL || rte_eal_init(eal_argc, eal_argv) < 0) {
		free(c);
		free(eal_argv);
		return 1;
	}
	xnv_logtype = rte_log_register("xnv.core");
	rte_log_set_level(xnv_logtype, RTE_LOG_INFO);
	rc = measure(c, pcap, rules_path, rounds);
	xnv_flows_destroy(c);
	free(c);
	free(eal_argv);
	return rc;
}
