/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of xnv-core's rx_pcap check (dom0-core/pcap_check.[ch]):
 * the four magic numbers, short headers, link types, files that cannot
 * be read, and which parts of a device string are looked at.
 */
#include <setjmp.h>	/* setjmp.h, stdarg.h, stddef.h: before cmocka.h */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pcap_check.h"

#define UNUSED __attribute__((unused))
#define TEST(name) static void name(void **state UNUSED)

/* A pcap global header: @p magic written in @p big or little byte order,
 * a version (not checked), snaplen 65535, @p type. */
static void
header(uint8_t h[XNV_PCAP_HDR_LEN], uint32_t magic, uint32_t type, int big)
{
	const uint32_t w[6] = { magic, 0x00040002u, 0, 0, 65535, type };
	unsigned i, b;

	for (i = 0; i < 6; i++)
		for (b = 0; b < 4; b++)
			h[4 * i + b] = (uint8_t)(w[i] >>
				(big ? 24 - 8 * b : 8 * b));
}

static int
check(const uint8_t *h, size_t len, char *err)
{
	return xnv_pcap_check_header(h, len, err, 256);
}

TEST(every_magic_in_either_byte_order_passes)
{
	static const uint32_t magics[] = { 0xa1b2c3d4u, 0xa1b23c4du };
	uint8_t h[XNV_PCAP_HDR_LEN];
	char err[256] = "";
	unsigned m, big;

	for (m = 0; m < 2; m++)
		for (big = 0; big < 2; big++) {
			header(h, magics[m], 1, (int)big);
			assert_int_equal(check(h, sizeof(h), err), 0);
		}
	/* FCS-length bits above the link type are not the link type */
	header(h, 0xa1b2c3d4u, 0x10000000u | 1, 0);
	assert_int_equal(check(h, sizeof(h), err), 0);
	assert_string_equal(err, "");
}

TEST(short_header_refused_with_its_length)
{
	uint8_t h[XNV_PCAP_HDR_LEN];
	char err[256];

	header(h, 0xa1b2c3d4u, 1, 0);
	assert_int_equal(check(h, 23, err), -1);
	assert_string_equal(err, "23 bytes, shorter than a pcap file header "
			    "(24 bytes)");
	assert_int_equal(check(h, 0, err), -1);
	assert_string_equal(err, "0 bytes, shorter than a pcap file header "
			    "(24 bytes)");
}

TEST(bad_magic_refused_naming_its_bytes)
{
	uint8_t h[XNV_PCAP_HDR_LEN];
	char err[256];

	memset(h, 0, sizeof(h));
	memcpy(h, "hello, this is text....", 24);
	assert_int_equal(check(h, sizeof(h), err), -1);
	assert_string_equal(err, "not a pcap file: it starts with bytes 68 65 "
			    "6c 6c, not a pcap magic number (a1b2c3d4 or "
			    "a1b23c4d, either byte order)");
	/* one byte off a real magic */
	header(h, 0xa1b2c3d5u, 1, 0);
	assert_int_equal(check(h, sizeof(h), err), -1);
	assert_non_null(strstr(err, "d5 c3 b2 a1"));
	header(h, 0x0a0d0d0au, 1, 0);
	assert_int_equal(check(h, sizeof(h), err), -1);
	assert_non_null(strstr(err, "pcapng"));
}

TEST(other_link_types_refused_by_number_and_name)
{
	uint8_t h[XNV_PCAP_HDR_LEN];
	char err[256];

	header(h, 0xa1b2c3d4u, 101, 1);
	assert_int_equal(check(h, sizeof(h), err), -1);
	assert_string_equal(err, "link type 101 (raw IP), not Ethernet (1): "
			    "ports carry Ethernet frames");
	header(h, 0xa1b23c4du, 0, 0);
	assert_int_equal(check(h, sizeof(h), err), -1);
	assert_non_null(strstr(err, "link type 0 (BSD loopback, DLT_NULL)"));
	header(h, 0xa1b2c3d4u, 4242, 0);
	assert_int_equal(check(h, sizeof(h), err), -1);
	assert_non_null(strstr(err, "link type 4242 (not Ethernet)"));
}

/* A file holding @p len bytes of @p data; its path in @p path. */
static void
file_with(char path[64], const void *data, size_t len)
{
	int fd;

	snprintf(path, 64, "/tmp/test_pcap_check.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

TEST(files_named_in_each_error)
{
	uint8_t h[XNV_PCAP_HDR_LEN];
	char path[64], err[512], want[512];

	header(h, 0xa1b2c3d4u, 1, 0);
	file_with(path, h, sizeof(h));
	assert_int_equal(xnv_pcap_check_file(path, err, sizeof(err)), 0);
	unlink(path);
	assert_int_equal(xnv_pcap_check_file(path, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: No such file or directory", path);
	assert_string_equal(err, want);

	file_with(path, h, 10);
	assert_int_equal(xnv_pcap_check_file(path, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: 10 bytes, shorter than a pcap file "
		 "header (24 bytes)", path);
	assert_string_equal(err, want);
	unlink(path);

	assert_int_equal(xnv_pcap_check_file("/", err, sizeof(err)), -1);
	assert_string_equal(err, "/: Is a directory");
}

TEST(device_string_only_rx_pcap_files_checked)
{
	uint8_t h[XNV_PCAP_HDR_LEN];
	char good[64], bad[64], dev[256], err[512], want[512];

	header(h, 0xa1b2c3d4u, 1, 0);
	file_with(good, h, sizeof(h));
	header(h, 0xa1b2c3d4u, 113, 0);
	file_with(bad, h, sizeof(h));

	snprintf(dev, sizeof(dev), "net_pcap0,rx_pcap=%s,tx_pcap=%s", good,
		 bad);
	assert_int_equal(xnv_pcap_check_dev(dev, err, sizeof(err)), 0);
	snprintf(dev, sizeof(dev), "net_pcap3,tx_pcap=/no/such/dir/x,"
		 "rx_pcap=%s,rx_pcap=%s", good, bad);
	assert_int_equal(xnv_pcap_check_dev(dev, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "rx_pcap %s: link type 113 (Linux "
		 "cooked, SLL), not Ethernet (1): ports carry Ethernet frames",
		 bad);
	assert_string_equal(err, want);
	/* not a pcap vdev, or a live interface: left to DPDK */
	assert_int_equal(xnv_pcap_check_dev("net_null0,rx_pcap=/no/such",
					    err, sizeof(err)), 0);
	assert_int_equal(xnv_pcap_check_dev("net_pcap0,rx_iface=lo,"
					    "tx_pcap=/no/such", err,
					    sizeof(err)), 0);
	assert_int_equal(xnv_pcap_check_dev("net_pcap0", err, sizeof(err)),
			 0);
	assert_int_equal(xnv_pcap_check_dev("net_pcap0,rx_pcap=", err,
					    sizeof(err)), -1);
	assert_string_equal(err, "rx_pcap : No such file or directory");
	unlink(good);
	unlink(bad);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_magic_in_either_byte_order_passes),
		cmocka_unit_test(short_header_refused_with_its_length),
		cmocka_unit_test(bad_magic_refused_naming_its_bytes),
		cmocka_unit_test(other_link_types_refused_by_number_and_name),
		cmocka_unit_test(files_named_in_each_error),
		cmocka_unit_test(device_string_only_rx_pcap_files_checked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
