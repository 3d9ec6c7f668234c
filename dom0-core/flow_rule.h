/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One flow rule as an operator writes it (`xnv-ctl flow add`, `[flow NAME]`
 * sections): what it matches, its priority.  Text in, text out, and the
 * match on a parsed packet; no DPDK (tests/unit/test_flow_rule.c runs it
 * as is).  flow_acl.c compiles rules into rte_acl tries.
 *
 *   priority=N  in_port=NAME  vlan=N|none  proto=NAME|N
 *   src=ADDR[/LEN]  dst=ADDR[/LEN]  sport=N[-M]  dport=N[-M]
 *
 * Every field may be omitted or written `any`: it then matches anything.
 * An address without /LEN is a host (/32, /128); bits past the prefix are
 * cleared (10.0.0.1/8 is 10.0.0.0/8).  An address, even `0.0.0.0/0` or
 * `::/0`, limits the rule to its family.  Ports need proto tcp, udp or
 * sctp, and never match a packet whose ports the core did not read (a
 * fragment); a range of every port (0-65535) is `any`.  An IPv6
 * fragment's protocol is its fragment header's (44): the parser does not
 * walk IPv6 extension headers.  vlan is the outermost 802.1Q / 802.1ad VLAN id; `none`
 * matches untagged frames only.  The highest priority wins (0..65535,
 * default 32768, as in OpenFlow); among equal priorities the rule added
 * first wins.  Rules match IPv4 and IPv6 packets only: other frames take
 * their port's chain.
 */
#ifndef XNV_FLOW_RULE_H
#define XNV_FLOW_RULE_H

#include <stddef.h>
#include <stdint.h>

#include "flow_key.h"

#define XNV_FLOW_PRIO_DEFAULT 32768u
#define XNV_FLOW_PRIO_MAX     65535u
#define XNV_FLOW_ANY          (-1)
#define XNV_FLOW_VLAN_NONE    0xffff	/* vlan=none; flow_key.h too */
#define XNV_FLOW_TEXT_LEN     256	/* xnv_flow_rule_format() needs */
/* A rule's fields, in the order the parser numbers them (and the keys
 * of a [flow NAME] section besides its chain: config_keys.c). */
#define XNV_FLOW_RULE_FIELDS "priority", "in_port", "vlan", "proto", "src", \
			     "dst", "sport", "dport"

struct xnv_flow_rule {
	uint32_t priority;
	int32_t in_port;		/* XNV_FLOW_ANY or a port index */
	int32_t vlan;			/* XNV_FLOW_ANY, 0..4095 or _NONE */
	int32_t proto;			/* XNV_FLOW_ANY or 0..255 */
	uint8_t family;			/* 0: both, 4 or 6 */
	uint8_t src_len, dst_len;	/* prefix lengths (0: any) */
	uint8_t src[16], dst[16];	/* network order, host bits 0 */
	uint16_t sport[2], dport[2];	/* first, last (0, 65535: any) */
};

/* Port names <-> indexes for in_port (the core's port table). */
struct xnv_flow_ports {
	int (*index)(void *arg, const char *name);	/* -1: unknown */
	const char *(*name)(void *arg, unsigned idx);
	void *arg;
};

/** Parse the match and priority fields of @p spec (space separated
 *  KEY=VALUE; no `chain=`) into @p r.  @return 0, or -EINVAL with one
 *  line naming the field in @p err. */
int xnv_flow_rule_parse(const char *spec, const struct xnv_flow_ports *ports,
			struct xnv_flow_rule *r, char *err, size_t errlen);

/* Each field of a rule as text, as xnv_flow_rule_parse() takes it. */
struct xnv_flow_text {
	char priority[8], in_port[40], vlan[8], proto[8];
	char src[56], dst[56], sport[12], dport[12];
};

void xnv_flow_rule_fields(const struct xnv_flow_rule *r,
			  const struct xnv_flow_ports *ports,
			  struct xnv_flow_text *t);

/** @p r in the form xnv_flow_rule_parse() takes back, every field
 *  written (`any` for a wildcard).  @return @p buf. */
char *xnv_flow_rule_format(const struct xnv_flow_rule *r,
			   const struct xnv_flow_ports *ports, char *buf,
			   size_t len);

/** A protocol's name (tcp, udp, ...) or NULL. */
const char *xnv_flow_proto_name(unsigned proto);

#endif /* XNV_FLOW_RULE_H */
