/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * firewall: ordered ACL, first match wins, default policy; optionally
 * stateful for TCP and UDP (replies of allowed flows pass).  Per-rule hit
 * counters on exit.  Rule format in README.md.
 *
 *   xnv-firewall --service fw -- --rules rules.txt [--stateful]
 */
#include <stdlib.h>
#include <string.h>

#include "htab.h"
#include "nfmain.h"
#include "parse.h"
#include "pkt.h"
#include "rules.h"

#define MAX_RULES     65536

enum {
	C_PACKETS, C_ALLOWED, C_DENIED, C_STATE_REPLIES, C_DEFAULT_HITS,
	C_NOT_IP, C_MALFORMED, C_STATE_FULL, C_STATE_EXPIRED, C_N
};
static const char *const counter_names[C_N] = {
	"packets", "allowed", "denied", "state_replies", "default_hits",
	"not_ip", "malformed", "state_full", "state_expired",
};

struct rule {
	uint8_t allow;
	uint8_t ver;		/* 0: both, else 4 or 6 (from the prefixes) */
	int16_t proto;		/* -1: any */
	uint8_t has_src, has_dst, has_ports;
	struct prefix src, dst;
	uint32_t sp_lo, sp_hi, dp_lo, dp_hi;
	unsigned line;
	uint64_t hits;
};

struct firewall {
	const char *rules_path;
	struct rule *rules;
	uint32_t n_rules;
	uint8_t default_allow, non_ip_allow, stateful;
	uint32_t max_flows;
	uint64_t timeout_ns;
	struct htab state;	/* an allowed flow, both ways -> struct state */
	uint32_t sweep_at;
	uint64_t swept_ns;	/* the sweep's clock (sweep_budget()) */
	uint64_t now;
	uint64_t c[C_N];
};

static const char *
parse_action(const char *s, uint8_t *allow)
{
	if (strcmp(s, "allow") != 0 && strcmp(s, "deny") != 0)
		return "expected allow or deny";
	*allow = s[0] == 'a';
	return NULL;
}

static const char *
parse_proto(const char *s, int16_t *proto)
{
	static const struct { const char *name; int16_t p; } names[] = {
		{ "any", -1 }, { "tcp", PROTO_TCP }, { "udp", PROTO_UDP },
		{ "icmp", PROTO_ICMP }, { "icmpv6", PROTO_ICMP6 },
	};
	uint32_t v;

	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i].name) == 0) {
			*proto = names[i].p;
			return NULL;
		}
	if (parse_u32(s, 0, 255, &v) != NULL)
		return "expected tcp, udp, icmp, icmpv6, any or 0..255";
	*proto = (int16_t)v;
	return NULL;
}

/* One "key value" pair of a rule line; @return NULL or why not. */
static const char *
rule_field(struct rule *r, const char *key, const char *val)
{
	if (strcmp(key, "proto") == 0)
		return parse_proto(val, &r->proto);
	if (strcmp(key, "src") == 0 || strcmp(key, "dst") == 0) {
		struct prefix *p = key[0] == 's' ? &r->src : &r->dst;
		uint8_t *has = key[0] == 's' ? &r->has_src : &r->has_dst;

		if (strcmp(val, "any") == 0)
			return NULL;
		*has = 1;
		return parse_prefix(val, p);
	}
	if (strcmp(key, "sport") == 0) {
		r->has_ports = 1;
		return parse_range(val, 65535, &r->sp_lo, &r->sp_hi);
	}
	if (strcmp(key, "dport") == 0) {
		r->has_ports = 1;
		return parse_range(val, 65535, &r->dp_lo, &r->dp_hi);
	}
	return "unknown key (proto, src, dst, sport, dport)";
}

/* rf's line into @p r; @return 0 or -1 (printed). */
static int
parse_rule(struct rfile *rf, struct rule *r)
{
	const char *err;
	int i;

	memset(r, 0, sizeof(*r));
	r->proto = -1;
	r->sp_hi = r->dp_hi = 65535;
	r->line = rf->line;
	if ((err = parse_action(rf->word[0], &r->allow)) != NULL)
		return rfile_error(rf, "'%s': %s", rf->word[0], err);
	if (rf->n_words % 2 == 0)
		return rfile_error(rf, "'%s' has no value", rf->word[rf->n_words - 1]);
	for (i = 1; i < rf->n_words; i += 2)
		if ((err = rule_field(r, rf->word[i], rf->word[i + 1])) != NULL)
			return rfile_error(rf, "%s '%s': %s", rf->word[i],
					   rf->word[i + 1], err);
	if (r->has_src && r->has_dst && r->src.ver != r->dst.ver)
		return rfile_error(rf, "src is IPv%u, dst is IPv%u", r->src.ver,
				   r->dst.ver);
	r->ver = r->has_src ? r->src.ver : r->has_dst ? r->dst.ver : 0;
	if (r->has_ports && r->proto != PROTO_TCP && r->proto != PROTO_UDP)
		return rfile_error(rf, "sport/dport need proto tcp or udp");
	return 0;
}

static int
load_rules(struct firewall *fw)
{
	struct rfile rf;
	uint32_t cap = 0;
	int n;

	if (rfile_open(&rf, fw->rules_path) < 0)
		return -1;
	while ((n = rfile_next(&rf)) > 0) {
		if (fw->n_rules == cap) {
			struct rule *r;

			cap = cap ? cap * 2 : 64;
			r = cap <= MAX_RULES ?
			    realloc(fw->rules, cap * sizeof(*r)) : NULL;
			if (r == NULL) {
				n = rfile_error(&rf, "more than %u rules",
						MAX_RULES);
				break;
			}
			fw->rules = r;
		}
		if (parse_rule(&rf, &fw->rules[fw->n_rules]) < 0) {
			n = -1;
			break;
		}
		fw->n_rules++;
	}
	rfile_close(&rf);
	return n;
}

static int
rule_matches(const struct rule *r, const struct pkt_info *pi,
	     const struct flow_key *k)
{
	if ((r->ver && r->ver != pi->ver) ||
	    (r->proto >= 0 && r->proto != pi->proto))
		return 0;
	if ((r->has_src && !prefix_match(&r->src, pi->ver, k->src)) ||
	    (r->has_dst && !prefix_match(&r->dst, pi->ver, k->dst)))
		return 0;
	if (r->has_ports && (!pi->has_ports ||
	    k->sport < r->sp_lo || k->sport > r->sp_hi ||
	    k->dport < r->dp_lo || k->dport > r->dp_hi))
		return 0;
	return 1;
}

/*
 * What the state table keeps of an allowed flow.  Its key is the flow's
 * two ends in a fixed order (flow_canon()), so one lookup finds a packet
 * of either direction: a reply, or one more packet of the flow that was
 * allowed.  The rules look at nothing but the flow key, so such a packet
 * would match the same rule again: its hit is counted without the scan.
 */
struct state {
	uint64_t last;		/* last seen, ns (first: state_gone()) */
	uint32_t rule;		/* the rule that allowed it; n_rules: the
				 * default */
	uint8_t dir;		/* of the packet that was allowed
				 * (flow_canon()) */
	uint8_t pad[3];
};

/* @p k with its ends in a fixed order into @p c: the lower (address,
 * port) first, addresses compared as two words (any total order does).
 * @return 1 if they were swapped, 0 if not; 2 when both ends are the
 * same (a packet that is its own reply). */
static int
flow_canon(const struct flow_key *k, struct flow_key *c)
{
	uint64_t s[2], t[2];
	int d;

	memcpy(s, k->src, sizeof(s));
	memcpy(t, k->dst, sizeof(t));
	d = s[0] != t[0] ? (s[0] < t[0] ? -1 : 1) :
	    s[1] != t[1] ? (s[1] < t[1] ? -1 : 1) :
	    (int)k->sport - (int)k->dport;
	if (d <= 0) {
		*c = *k;
		return d == 0 ? 2 : 0;
	}
	flow_key_reverse(k, c);
	return 1;
}

static int
state_gone(const void *key, void *val, void *arg)
{
	struct firewall *fw = arg;

	(void)key;
	if (fw->now - *(uint64_t *)val <= fw->timeout_ns)
		return 0;
	nf_count(fw->c, C_STATE_EXPIRED, 1);
	return 1;
}

/* Count a hit of rule @p i (n_rules: the default); @return its verdict. */
static uint8_t
rule_hit(struct firewall *fw, uint32_t i)
{
	if (i == fw->n_rules) {
		nf_count(fw->c, C_DEFAULT_HITS, 1);
		return fw->default_allow;
	}
	fw->rules[i].hits++;	/* published after the burst (nf_publish()) */
	return fw->rules[i].allow;
}

/* The first rule @p k matches, n_rules if none. */
static uint32_t
rule_find(const struct firewall *fw, const struct pkt_info *pi,
	  const struct flow_key *k)
{
	uint32_t i;

	for (i = 0; i < fw->n_rules; i++)
		if (rule_matches(&fw->rules[i], pi, k))
			break;
	return i;
}

/*
 * A TCP/UDP packet, stateful: its flow's state looked up once.  A reply
 * of a live allowed flow passes; a packet of the direction that was
 * allowed matches the rule it matched then (refreshed, even if idle too
 * long: it is allowed again by that rule).  Otherwise the rules decide,
 * and an allowed flow is remembered in this packet's direction.
 */
static uint8_t
tracked_verdict(struct firewall *fw, const struct pkt_info *pi,
		const struct flow_key *k)
{
	struct flow_key ck;
	int dir = flow_canon(k, &ck), is_new;
	struct state *st = htab_find(&fw->state, &ck);
	uint32_t i;
	uint8_t allow;

	if (st != NULL && (dir == 2 || st->dir != dir)) {
		if (!state_gone(&ck, st, fw)) {
			st->last = fw->now;
			nf_count(fw->c, C_STATE_REPLIES, 1);
			return 1;
		}
		htab_remove(&fw->state, &ck);	/* idle too long */
		st = NULL;
	}
	i = st != NULL ? st->rule : rule_find(fw, pi, k);
	allow = rule_hit(fw, i);
	if (allow && st == NULL &&
	    (st = htab_insert(&fw->state, &ck, &is_new)) == NULL)
		nf_count(fw->c, C_STATE_FULL, 1);
	else if (allow)
		*st = (struct state){ .last = fw->now, .rule = i,
				      .dir = (uint8_t)dir };
	return allow;
}

/* One packet's verdict (the burst's clock already read: burst_start). */
static xnv_action_t
filter(struct xnv_pkt *pkt, void *ctx)
{
	struct firewall *fw = ctx;
	uint8_t *p = xnv_pkt_data(pkt);
	struct pkt_info pi;
	struct flow_key k;
	uint8_t allow;

	nf_count(fw->c, C_PACKETS, 1);
	switch (pkt_parse(p, xnv_pkt_len(pkt), &pi)) {
	case PKT_NOT_IP:
		nf_count(fw->c, C_NOT_IP, 1);
		allow = fw->non_ip_allow;
		goto out;
	case PKT_BAD_IP:
	case PKT_BAD_L4:
		nf_count(fw->c, C_MALFORMED, 1);
		allow = 0;
		goto out;
	}
	flow_key_get(p, &pi, &k);
	if (fw->stateful && pi.has_ports)
		allow = tracked_verdict(fw, &pi, &k);
	else
		allow = rule_hit(fw, rule_find(fw, &pi, &k));
out:
	nf_count(fw->c, allow ? C_ALLOWED : C_DENIED, 1);
	return allow ? XNV_NEXT : XNV_DROP;
}

/* Before a burst (nfmain.h, xnv_nf_run_burst()): the clock read, and the
 * state table swept as far as the time since the last sweep earned
 * (htab_sweep_paced()). */
static void
burst_start(void *ctx, struct xnv_pkt *pkts, unsigned n)
{
	struct firewall *fw = ctx;

	if (!fw->stateful)
		return;
	(void)pkts, (void)n;
	fw->now = coarse_ns();
	htab_sweep_paced(&fw->state, &fw->sweep_at, &fw->swept_ns, fw->now,
			 fw->timeout_ns, state_gone, fw);
}

static int
on_opt(void *ctx, int c, const char *arg)
{
	struct firewall *fw = ctx;
	const char *err = NULL, *what = NULL;
	uint32_t v;

	switch (c) {
	case 'r':
		fw->rules_path = arg;
		break;
	case 'd':
		err = parse_action(arg, &fw->default_allow);
		what = "--default";
		break;
	case 'n':
		err = parse_action(arg, &fw->non_ip_allow);
		what = "--non-ip";
		break;
	case 's':
		fw->stateful = 1;
		break;
	case 't':
		err = parse_u32(arg, 1, 86400, &v);
		fw->timeout_ns = (uint64_t)v * 1000000000u;
		what = "--state-timeout (seconds, 1..86400)";
		break;
	case 'm':
		err = parse_u32(arg, 16, 1u << 22, &fw->max_flows);
		what = "--max-flows (16..4194304)";
		break;
	}
	if (err != NULL)
		fprintf(stderr, "xnv-firewall: %s '%s': %s\n", what, arg, err);
	return err != NULL ? -1 : 0;
}

static int
load(void *ctx)
{
	struct firewall *fw = ctx;

	if (fw->rules_path == NULL) {
		fprintf(stderr, "xnv-firewall: --rules FILE is required "
			"(see -- --help)\n");
		return NF_USAGE;
	}
	if (fw->stateful &&
	    htab_init(&fw->state, fw->max_flows, sizeof(struct flow_key),
		      sizeof(struct state)) < 0) {
		fprintf(stderr, "xnv-firewall: out of memory\n");
		return -1;
	}
	return load_rules(fw);
}

/* Attached: the hits of the first rules published too, in the slots the
 * counters leave (the exit report has every rule). */
static int
attached(void *ctx, struct xnv_nf *nf)
{
	struct firewall *fw = ctx;
	char name[XNV_NF_STAT_NAME_MAX + 1];
	uint32_t i;

	(void)nf;
	for (i = 0; i < fw->n_rules; i++) {
		snprintf(name, sizeof(name), "rule%u_hits", i + 1);
		if (i < XNV_NF_STATS_MAX - C_N)
			nf_publish(name, &fw->rules[i].hits);
	}
	return 0;
}

/* Where its counters are, for nf_main to publish them. */
static uint64_t *
counters(void *ctx)
{
	return ((struct firewall *)ctx)->c;
}

static void
report(void *ctx, FILE *out)
{
	struct firewall *fw = ctx;

	nf_counters(out, "firewall", counter_names, fw->c, C_N);
	for (uint32_t i = 0; i < fw->n_rules; i++)
		fprintf(out, "firewall: rule %u hits %llu line %u %s\n", i + 1,
			(unsigned long long)fw->rules[i].hits,
			fw->rules[i].line, fw->rules[i].allow ? "allow" : "deny");
}

static void
fini(void *ctx)
{
	struct firewall *fw = ctx;

	htab_free(&fw->state);
	free(fw->rules);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rules", required_argument, NULL, 'r' },
		{ "default", required_argument, NULL, 'd' },
		{ "non-ip", required_argument, NULL, 'n' },
		{ "stateful", no_argument, NULL, 's' },
		{ "state-timeout", required_argument, NULL, 't' },
		{ "max-flows", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct nf_app app = {
		.name = "firewall",
		.summary = "ordered ACL, first match wins, optionally stateful",
		.usage =
		"  --rules FILE         'allow|deny [proto P] [src PREFIX] [dst PREFIX]\n"
		"                       [sport RANGE] [dport RANGE]', one a line\n"
		"  --default allow|deny no rule matched (default: deny)\n"
		"  --non-ip allow|deny  frames that are not IPv4/IPv6 (default: deny)\n"
		"  --stateful           replies of allowed TCP/UDP flows pass\n"
		"  --state-timeout S    an idle flow is forgotten after S s (120)\n"
		"  --max-flows N        flows remembered at most (65536)\n",
		.opts = opts, .opt = on_opt, .load = load,
		.attached = attached,
		.handler = filter, .burst_start = burst_start,
		.report = report, .fini = fini,
		.counter_names = counter_names, .n_counters = C_N,
		.counters = counters,
	};
	static struct firewall fw = {
		.max_flows = 65536, .timeout_ns = 120000000000ull,
	};

	return nf_main(argc, argv, &app, &fw);
}
