/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dom0-core/config_devargs.c: the devargs of the vdev drivers the core
 * knows.  Which driver a device string is, what its keys may be, which
 * interfaces it names, and the one line each mistake gets.  rte_kvargs
 * only, no EAL.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config_devargs.h"

static void
test_driver_by_name_prefix(void **state)
{
	(void)state;
	assert_string_equal(xnv_devargs_drv("net_af_packet0,iface=lo")->name,
			    "net_af_packet");
	assert_string_equal(xnv_devargs_drv("net_pcap12")->name, "net_pcap");
	assert_string_equal(xnv_devargs_drv("net_ring0")->name, "net_ring");
	assert_null(xnv_devargs_drv("net_tap0,iface=t0"));
	assert_null(xnv_devargs_drv("0000:01:00.0"));
}

static void
test_known_keys_pass(void **state)
{
	static const char *const good[] = {
		"net_af_packet0,iface=lo,qpairs=1,blocksz=4096,framesz=2048,"
		"framecnt=512,qdisc_bypass=1",
		"net_pcap0,rx_pcap=a.pcap,tx_pcap=b.pcap,infinite_rx=1",
		"net_pcap1,rx_iface_in=lo,tx_iface=lo,phy_mac=1",
		"net_null0", "net_null0,size=64,copy=1,no-rx=1",
		"net_memif0,id=1,role=server,bsize=2048,rsize=10,socket=/s,"
		"socket-abstract=no,mac=02:00:00:00:00:01,zero-copy=no,secret=x",
		"net_ring0,nodeaction=r:0:CREATE",
		"net_tap0,anything=goes",	/* not ours: left to DPDK */
	};
	char err[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_int_equal(xnv_devargs_check_keys(good[i], err,
							sizeof(err)), 0);
}

static void
test_unknown_key_named_with_the_keys(void **state)
{
	static const struct { const char *dev, *want; } bad[] = {
		{ "net_af_packet0,ifcae=eth1", "net_af_packet has no key "
		  "'ifcae' (keys: iface, qpairs, blocksz, framesz, framecnt, "
		  "qdisc_bypass)" },
		{ "net_null0,size=64,sise=64", "net_null has no key 'sise' "
		  "(keys: size, copy, no-rx)" },
		{ "net_ring0,nodes=2", "net_ring has no key 'nodes' (keys: "
		  "nodeaction, internal)" },
		{ "net_pcap0,=x", "an argument without a key, such as "
		  "'=value' (net_pcap keys: rx_pcap, tx_pcap, rx_iface, "
		  "rx_iface_in, tx_iface, iface, phy_mac, infinite_rx)" },
	};
	char err[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(xnv_devargs_check_keys(bad[i].dev, err,
							sizeof(err)), -EINVAL);
		assert_string_equal(err, bad[i].want);
	}
}

static void
test_interfaces_must_exist(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(xnv_devargs_check_ifaces("net_af_packet0,iface=lo",
						  err, sizeof(err)), 0);
	assert_int_equal(xnv_devargs_check_ifaces(
		"net_pcap0,rx_iface=lo,tx_iface=xnv-no-such0", err,
		sizeof(err)), -ENODEV);
	assert_string_equal(err, "tx_iface=xnv-no-such0: no such kernel "
			    "interface (`ip link` lists them)");
	assert_int_equal(xnv_devargs_check_ifaces("net_af_packet0,iface",
						  err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "iface= names no interface (iface=eth0)");
	/* keys naming no interface, and drivers naming none */
	assert_int_equal(xnv_devargs_check_ifaces("net_pcap0,rx_pcap=nope",
						  err, sizeof(err)), 0);
	assert_int_equal(xnv_devargs_check_ifaces("net_tap0,iface=nope0",
						  err, sizeof(err)), 0);
}

static void
test_key_of_an_argument(void **state)
{
	const char *const *rx = xnv_devargs_drv("net_pcap0")->rx;

	(void)state;
	assert_string_equal(xnv_devargs_key("rx_iface=lo,tx_pcap=x", rx),
			    "rx_iface");
	assert_string_equal(xnv_devargs_key("rx_iface_in=lo", rx),
			    "rx_iface_in");
	assert_null(xnv_devargs_key("tx_pcap=x", rx));
	assert_null(xnv_devargs_key("rx_pcap", rx));	/* no '=' */
	assert_null(xnv_devargs_key("rx_pcap=x", NULL));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_driver_by_name_prefix),
		cmocka_unit_test(test_known_keys_pass),
		cmocka_unit_test(test_unknown_key_named_with_the_keys),
		cmocka_unit_test(test_interfaces_must_exist),
		cmocka_unit_test(test_key_of_an_argument),
	};

	return cmocka_run_group_tests_name("config_devargs", tests, NULL,
					   NULL);
}
