/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of flow rules as text (dom0-core/flow_rule.c): what a rule
 * means once parsed, the form it is shown in (every field, `any` for a
 * wildcard), that this form parses back to the same rule, and one line
 * naming the field for each bad input.
 */
#include <setjmp.h>	/* setjmp.h, stdarg.h, stddef.h: before cmocka.h */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>

#include "flow_rule.h"

#define UNUSED __attribute__((unused))
#define TEST(name) static void name(void **state UNUSED)

static const char *const port_names[] = { "in", "out", "uplink" };

static int
port_index(void *arg UNUSED, const char *name)
{
	unsigned i;

	for (i = 0; i < 3; i++)
		if (strcmp(name, port_names[i]) == 0)
			return (int)i;
	return -1;
}

static const char *
port_name(void *arg UNUSED, unsigned idx)
{
	return idx < 3 ? port_names[idx] : NULL;
}

static const struct xnv_flow_ports ports = { port_index, port_name, NULL };

static struct xnv_flow_rule
ok(const char *spec)
{
	struct xnv_flow_rule r;
	char err[200] = "";

	if (xnv_flow_rule_parse(spec, &ports, &r, err, sizeof(err)) != 0)
		fail_msg("'%s' refused: %s", spec, err);
	return r;
}

static const char *
shown(const char *spec)
{
	static char buf[XNV_FLOW_TEXT_LEN];
	struct xnv_flow_rule r = ok(spec);

	return xnv_flow_rule_format(&r, &ports, buf, sizeof(buf));
}

TEST(omitted_fields_are_any)
{
	struct xnv_flow_rule r = ok("proto=udp src=10.0.0.1 dst=10.0.0.2 "
				    "dport=53");

	assert_int_equal(r.sport[0], 0);
	assert_int_equal(r.sport[1], 65535);
	assert_int_equal(r.dport[0], 53);
	assert_int_equal(r.dport[1], 53);
	assert_int_equal(r.vlan, XNV_FLOW_ANY);
	assert_int_equal(r.in_port, XNV_FLOW_ANY);
	assert_int_equal(r.priority, XNV_FLOW_PRIO_DEFAULT);
	assert_string_equal(shown("proto=udp src=10.0.0.1 dst=10.0.0.2 "
				  "dport=53"),
			    "priority=32768 in_port=any vlan=any proto=udp "
			    "src=10.0.0.1/32 dst=10.0.0.2/32 sport=any "
			    "dport=53");
	assert_string_equal(shown(""), "priority=32768 in_port=any vlan=any "
			    "proto=any src=any dst=any sport=any dport=any");
}

TEST(every_field_shown_as_understood)
{
	assert_string_equal(shown("priority=7 in_port=uplink vlan=100 proto=6 "
				  "src=10.1.2.3/8 dst=192.168.1.0/24 "
				  "sport=1000-2000 dport=443"),
			    "priority=7 in_port=uplink vlan=100 proto=tcp "
			    "src=10.0.0.0/8 dst=192.168.1.0/24 sport=1000-2000 "
			    "dport=443");
	assert_string_equal(shown("vlan=none proto=47"), "priority=32768 "
			    "in_port=any vlan=none proto=gre src=any dst=any "
			    "sport=any dport=any");
	assert_string_equal(shown("proto=200 dst=2001:db8:0:0:8001::ff/65"),
			    "priority=32768 in_port=any vlan=any proto=200 "
			    "src=::/0 dst=2001:db8:0:0:8000::/65 sport=any "
			    "dport=any");
	/* an address limits the rule to its family, even /0 */
	assert_int_equal(ok("src=0.0.0.0/0").family, 4);
	assert_int_equal(ok("src=any").family, 0);
	assert_int_equal(ok("sport=any proto=any").family, 0);
}

TEST(prefix_host_bits_cleared)
{
	struct xnv_flow_rule r = ok("src=10.255.255.255/9");

	assert_int_equal(r.src[0], 10);
	assert_int_equal(r.src[1], 0x80);
	assert_int_equal(r.src[2], 0);
	assert_int_equal(r.src_len, 9);
	r = ok("dst=ffff:ffff::1/17");
	assert_int_equal(r.dst[0], 0xff);
	assert_int_equal(r.dst[1], 0xff);
	assert_int_equal(r.dst[2], 0x80);
	assert_int_equal(r.dst[3], 0);
	assert_int_equal(r.dst[15], 0);
}

/* What is shown parses back to the same rule, byte for byte. */
TEST(shown_form_parses_back)
{
	static const char *const specs[] = {
		"proto=udp src=10.0.0.1 dst=10.0.0.2 sport=1 dport=53",
		"priority=0 in_port=in vlan=4095 proto=sctp sport=1-65535",
		"priority=65535 vlan=0 proto=icmp6 src=fe80::/10",
		"dst=2001:db8::/32 proto=esp",
		"src=1.2.3.4/31 dst=5.6.7.8/1 proto=tcp dport=0",
		"",
	};
	unsigned i;

	for (i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		struct xnv_flow_rule a = ok(specs[i]), b;
		char text[XNV_FLOW_TEXT_LEN];

		xnv_flow_rule_format(&a, &ports, text, sizeof(text));
		b = ok(text);
		if (memcmp(&a, &b, sizeof(a)) != 0)
			fail_msg("'%s' shown as '%s' parses to another rule",
				 specs[i], text);
	}
}

static void
refused(const char *spec, const char *why)
{
	struct xnv_flow_rule r;
	char err[200] = "";
	int rc = xnv_flow_rule_parse(spec, &ports, &r, err, sizeof(err));

	if (rc != -EINVAL || strstr(err, why) == NULL || strchr(err, '\n'))
		fail_msg("'%s': rc %d, '%s' (wanted '%s')", spec, rc, err, why);
}

TEST(bad_fields_named_in_one_line)
{
	refused("proto=udp dport=53 dport=54", "dport given twice");
	refused("color=red", "unknown field 'color'");
	refused("proto", "'proto' is not KEY=VALUE");
	refused("proto=", "'proto=' is not KEY=VALUE");
	refused("=udp", "is not KEY=VALUE");
	refused("proto=xyz", "proto 'xyz'");
	refused("proto=256", "proto '256'");
	refused("src=10.0.0.300", "src '10.0.0.300'");
	refused("src=10.0.0.1/33", "src '10.0.0.1/33'");
	refused("dst=::1/129", "dst '::1/129'");
	refused("src=10.0.0.1/08", "src '10.0.0.1/08'");
	refused("src=10.0.0.1/-1", "src '10.0.0.1/-1'");
	refused("src=10.0.0.1 dst=::1", "different families");
	refused("proto=udp dport=2000-1000", "dport '2000-1000'");
	refused("proto=udp dport=65536", "dport '65536'");
	refused("proto=udp sport=-5", "sport '-5'");
	refused("proto=udp sport=1-", "sport '1-'");
	refused("proto=udp sport=+5", "sport '+5'");
	refused("dport=53", "sport/dport need proto tcp, udp or sctp");
	refused("proto=icmp dport=53", "sport/dport need proto");
	refused("vlan=4096", "vlan '4096'");
	refused("vlan=ten", "vlan 'ten'");
	refused("in_port=nosuch", "in_port 'nosuch' is not a port");
	refused("priority=65536", "priority '65536' is not 0..65535");
	refused("priority=any", "priority 'any'");
	refused("priority=007", "priority '007'");
}

TEST(no_port_table_refuses_in_port)
{
	struct xnv_flow_rule r;
	char err[200];

	assert_int_equal(xnv_flow_rule_parse("in_port=in", NULL, &r, err,
					     sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "in_port 'in'"));
}

TEST(protocol_names)
{
	assert_string_equal(xnv_flow_proto_name(6), "tcp");
	assert_string_equal(xnv_flow_proto_name(17), "udp");
	assert_string_equal(xnv_flow_proto_name(58), "icmp6");
	assert_null(xnv_flow_proto_name(200));
	assert_int_equal(ok("proto=gre").proto, 47);
	assert_int_equal(ok("proto=0").proto, 0);
	assert_int_equal(ok("proto=any").proto, XNV_FLOW_ANY);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(omitted_fields_are_any),
		cmocka_unit_test(every_field_shown_as_understood),
		cmocka_unit_test(prefix_host_bits_cleared),
		cmocka_unit_test(shown_form_parses_back),
		cmocka_unit_test(bad_fields_named_in_one_line),
		cmocka_unit_test(no_port_table_refuses_in_port),
		cmocka_unit_test(protocol_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
