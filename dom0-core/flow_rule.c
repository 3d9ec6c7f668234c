/* SPDX-License-Identifier: BSD-3-Clause */
/* Flow rules as text: parse and format (grammar: flow_rule.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow_rule.h"

static const struct {
	const char *name;
	unsigned num;
} protos[] = {
	{ "icmp", IPPROTO_ICMP }, { "tcp", IPPROTO_TCP },
	{ "udp", IPPROTO_UDP }, { "gre", IPPROTO_GRE },
	{ "esp", IPPROTO_ESP }, { "icmp6", IPPROTO_ICMPV6 },
	{ "sctp", IPPROTO_SCTP },
};

const char *
xnv_flow_proto_name(unsigned proto)
{
	unsigned i;

	for (i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
		if (protos[i].num == proto)
			return protos[i].name;
	return NULL;
}

static int
bad(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A decimal number in [0, max], nothing else (no sign, no leading zero,
 * no junk): -1 otherwise. */
static long
number(const char *v, long max)
{
	char *end;
	long x;

	if (v[0] < '0' || v[0] > '9' || (v[0] == '0' && v[1] != '\0'))
		return -1;
	x = strtol(v, &end, 10);
	return *end != '\0' || x > max ? -1 : x;
}

static int
parse_proto(const char *v, struct xnv_flow_rule *r)
{
	unsigned i;

	for (i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
		if (strcmp(v, protos[i].name) == 0) {
			r->proto = (int32_t)protos[i].num;
			return 0;
		}
	r->proto = (int32_t)number(v, 255);
	return r->proto < 0 ? -1 : 0;
}

/* "N" or "N-M" with N <= M. */
static int
parse_range(const char *v, uint16_t out[2])
{
	char lo[8];
	const char *dash = strchr(v, '-');
	long a, b;

	if (dash == NULL) {
		a = b = number(v, 65535);
	} else {
		if (dash - v >= (long)sizeof(lo))
			return -1;
		memcpy(lo, v, (size_t)(dash - v));
		lo[dash - v] = '\0';
		a = number(lo, 65535);
		b = number(dash + 1, 65535);
	}
	if (a < 0 || b < 0 || a > b)
		return -1;
	out[0] = (uint16_t)a;
	out[1] = (uint16_t)b;
	return 0;
}

/* "ADDR" or "ADDR/LEN"; clears host bits.  Returns the family or -1. */
static int
parse_prefix(const char *v, uint8_t addr[16], uint8_t *len)
{
	char a[64];
	const char *slash = strchr(v, '/');
	size_t n = slash != NULL ? (size_t)(slash - v) : strlen(v);
	int fam, i;
	long l;

	if (n >= sizeof(a))
		return -1;
	memcpy(a, v, n);
	a[n] = '\0';
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, a, addr) == 1)
		fam = 4;
	else if (inet_pton(AF_INET6, a, addr) == 1)
		fam = 6;
	else
		return -1;
	l = slash != NULL ? number(slash + 1, fam == 4 ? 32 : 128) :
			    (fam == 4 ? 32 : 128);
	if (l < 0)
		return -1;
	*len = (uint8_t)l;
	for (i = 0; i < 16; i++) {
		int keep = (int)l - i * 8;

		if (keep <= 0)
			addr[i] = 0;
		else if (keep < 8)
			addr[i] &= (uint8_t)(0xff00u >> keep);
	}
	return fam;
}

static int
set_family(struct xnv_flow_rule *r, int fam, char *err, size_t errlen)
{
	if (r->family != 0 && r->family != fam)
		return bad(err, errlen, "flow rule: src= and dst= are of "
			   "different families (IPv4 and IPv6)");
	r->family = (uint8_t)fam;
	return 0;
}

/* One KEY=VALUE; @p seen collects the keys given (each once). */
static int
parse_field(char *tok, const struct xnv_flow_ports *ports,
	    struct xnv_flow_rule *r, unsigned *seen, char *err, size_t errlen)
{
	static const char *const keys[] = { XNV_FLOW_RULE_FIELDS };
	char *v = strchr(tok, '=');
	unsigned k;
	int fam;
	long x;

	if (v == NULL || v == tok || v[1] == '\0')
		return bad(err, errlen, "flow rule: '%.40s' is not KEY=VALUE",
			   tok);
	*v++ = '\0';
	for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		if (strcmp(tok, keys[k]) == 0)
			break;
	if (k == sizeof(keys) / sizeof(keys[0]))
		return bad(err, errlen, "flow rule: unknown field '%.40s' "
			   "(priority, in_port, vlan, proto, src, dst, sport, "
			   "dport, chain)", tok);
	if (*seen & (1u << k))
		return bad(err, errlen, "flow rule: %s given twice", tok);
	*seen |= 1u << k;
	if (strcmp(v, "any") == 0 && k != 0)
		return 0;	/* the default of every match field */
	switch (k) {
	case 0:
		if ((x = number(v, XNV_FLOW_PRIO_MAX)) < 0)
			return bad(err, errlen, "flow rule: priority '%.40s' "
				   "is not 0..%u", v, XNV_FLOW_PRIO_MAX);
		r->priority = (uint32_t)x;
		return 0;
	case 1:
		r->in_port = ports != NULL && ports->index != NULL ?
			     ports->index(ports->arg, v) : -1;
		if (r->in_port < 0)
			return bad(err, errlen, "flow rule: in_port '%.40s' is "
				   "not a port of this core", v);
		return 0;
	case 2:
		r->vlan = strcmp(v, "none") == 0 ? XNV_FLOW_VLAN_NONE :
			  (int32_t)number(v, 4095);
		if (r->vlan < 0)
			return bad(err, errlen, "flow rule: vlan '%.40s' is "
				   "not 0..4095, none or any", v);
		return 0;
	case 3:
		if (parse_proto(v, r) < 0)
			return bad(err, errlen, "flow rule: proto '%.40s' is "
				   "not a name (tcp, udp, icmp, icmp6, sctp, "
				   "gre, esp), 0..255 or any", v);
		return 0;
	case 4:
	case 5:
		fam = parse_prefix(v, k == 4 ? r->src : r->dst,
				   k == 4 ? &r->src_len : &r->dst_len);
		if (fam < 0)
			return bad(err, errlen, "flow rule: %s '%.50s' is not "
				   "an IPv4 or IPv6 address[/prefix length]",
				   tok, v);
		return set_family(r, fam, err, errlen);
	default:
		if (parse_range(v, k == 6 ? r->sport : r->dport) < 0)
			return bad(err, errlen, "flow rule: %s '%.40s' is not "
				   "a port, a range FIRST-LAST of ports "
				   "(0..65535) or any", tok, v);
		return 0;
	}
}

static int
ports_any(const uint16_t p[2])
{
	return p[0] == 0 && p[1] == 65535;
}

int
xnv_flow_rule_parse(const char *spec, const struct xnv_flow_ports *ports,
		    struct xnv_flow_rule *r, char *err, size_t errlen)
{
	char buf[512], *tok, *save = NULL;
	unsigned seen = 0;
	int rc;

	memset(r, 0, sizeof(*r));	/* padding too: rules compare as bytes */
	r->priority = XNV_FLOW_PRIO_DEFAULT;
	r->in_port = r->vlan = r->proto = XNV_FLOW_ANY;
	r->sport[1] = r->dport[1] = 65535;
	if (strlen(spec) >= sizeof(buf))
		return bad(err, errlen, "flow rule: longer than %zu bytes",
			   sizeof(buf) - 1);
	strcpy(buf, spec);
	for (tok = strtok_r(buf, " \t", &save); tok != NULL;
	     tok = strtok_r(NULL, " \t", &save))
		if ((rc = parse_field(tok, ports, r, &seen, err, errlen)) < 0)
			return rc;
	if ((!ports_any(r->sport) || !ports_any(r->dport)) &&
	    r->proto != IPPROTO_TCP && r->proto != IPPROTO_UDP &&
	    r->proto != IPPROTO_SCTP)
		return bad(err, errlen, "flow rule: sport/dport need proto "
			   "tcp, udp or sctp");
	return 0;
}

static void
fmt_prefix(char *out, size_t len, int fam, const uint8_t *a, unsigned l)
{
	char s[48];

	if (fam == 0) {
		snprintf(out, len, "any");
		return;
	}
	inet_ntop(fam == 4 ? AF_INET : AF_INET6, a, s, sizeof(s));
	snprintf(out, len, "%s/%u", s, l);
}

static void
fmt_range(char *out, size_t len, const uint16_t p[2])
{
	if (ports_any(p))
		snprintf(out, len, "any");
	else if (p[0] == p[1])
		snprintf(out, len, "%u", p[0]);
	else
		snprintf(out, len, "%u-%u", p[0], p[1]);
}

void
xnv_flow_rule_fields(const struct xnv_flow_rule *r,
		     const struct xnv_flow_ports *ports, struct xnv_flow_text *t)
{
	const char *pn = NULL, *proto;

	snprintf(t->priority, sizeof(t->priority), "%u", r->priority);
	if (r->in_port != XNV_FLOW_ANY && ports != NULL && ports->name)
		pn = ports->name(ports->arg, (unsigned)r->in_port);
	snprintf(t->in_port, sizeof(t->in_port), "%s",
		 r->in_port == XNV_FLOW_ANY ? "any" : pn ? pn : "?");
	if (r->vlan == XNV_FLOW_ANY || r->vlan == XNV_FLOW_VLAN_NONE)
		snprintf(t->vlan, sizeof(t->vlan), "%s",
			 r->vlan == XNV_FLOW_ANY ? "any" : "none");
	else
		snprintf(t->vlan, sizeof(t->vlan), "%d", r->vlan);
	proto = r->proto == XNV_FLOW_ANY ? "any" :
		xnv_flow_proto_name((unsigned)r->proto);
	if (proto != NULL)
		snprintf(t->proto, sizeof(t->proto), "%s", proto);
	else
		snprintf(t->proto, sizeof(t->proto), "%d", r->proto);
	fmt_prefix(t->src, sizeof(t->src), r->family, r->src, r->src_len);
	fmt_prefix(t->dst, sizeof(t->dst), r->family, r->dst, r->dst_len);
	fmt_range(t->sport, sizeof(t->sport), r->sport);
	fmt_range(t->dport, sizeof(t->dport), r->dport);
}

char *
xnv_flow_rule_format(const struct xnv_flow_rule *r,
		     const struct xnv_flow_ports *ports, char *buf, size_t len)
{
	struct xnv_flow_text t;

	xnv_flow_rule_fields(r, ports, &t);
	snprintf(buf, len, "priority=%s in_port=%s vlan=%s proto=%s src=%s "
		 "dst=%s sport=%s dport=%s", t.priority, t.in_port, t.vlan,
		 t.proto, t.src, t.dst, t.sport, t.dport);
	return buf;
}
