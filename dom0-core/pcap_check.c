/* SPDX-License-Identifier: BSD-3-Clause */
/* The rx_pcap files of net_pcap ports, checked before EAL starts; see
 * pcap_check.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pcap_check.h"

#define MAGIC_US 0xa1b2c3d4u	/* microsecond timestamps */
#define MAGIC_NS 0xa1b23c4du	/* nanosecond timestamps */
#define MAGIC_PCAPNG 0x0a0d0d0au
#define LINKTYPE_MASK 0x03ffffffu	/* the rest: FCS length bits */

/* Link types a capture of "real traffic" often has instead of Ethernet. */
static const struct { uint32_t type; const char *name; } link_names[] = {
	{ 0, "BSD loopback, DLT_NULL" }, { 101, "raw IP" },
	{ 105, "802.11" }, { 113, "Linux cooked, SLL" },
	{ 127, "802.11 radiotap" }, { 228, "raw IPv4" }, { 229, "raw IPv6" },
	{ 276, "Linux cooked v2, SLL2" },
};

static uint32_t
get32(const uint8_t *p, int big)
{
	return big ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
		     (uint32_t)p[2] << 8 | p[3] :
		     (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 |
		     (uint32_t)p[1] << 8 | p[0];
}

static const char *
link_name(uint32_t type)
{
	size_t i;

	for (i = 0; i < sizeof(link_names) / sizeof(link_names[0]); i++)
		if (link_names[i].type == type)
			return link_names[i].name;
	return "not Ethernet";
}

int
xnv_pcap_check_header(const uint8_t *h, size_t len, char *err, size_t errlen)
{
	uint32_t magic, type;
	int big;

	if (len < XNV_PCAP_HDR_LEN) {
		snprintf(err, errlen, "%zu bytes, shorter than a pcap file "
			 "header (%u bytes)", len, XNV_PCAP_HDR_LEN);
		return -1;
	}
	magic = get32(h, 0);
	if (magic == MAGIC_PCAPNG) {
		snprintf(err, errlen, "a pcapng file, not pcap (convert it: "
			 "editcap -F pcap IN OUT)");
		return -1;
	}
	big = get32(h, 1) == MAGIC_US || get32(h, 1) == MAGIC_NS;
	if (!big && magic != MAGIC_US && magic != MAGIC_NS) {
		snprintf(err, errlen, "not a pcap file: it starts with bytes "
			 "%02x %02x %02x %02x, not a pcap magic number "
			 "(a1b2c3d4 or a1b23c4d, either byte order)",
			 h[0], h[1], h[2], h[3]);
		return -1;
	}
	type = get32(h + 20, big) & LINKTYPE_MASK;
	if (type != XNV_PCAP_LINKTYPE_ETHERNET) {
		snprintf(err, errlen, "link type %u (%s), not Ethernet (%u): "
			 "ports carry Ethernet frames", type, link_name(type),
			 XNV_PCAP_LINKTYPE_ETHERNET);
		return -1;
	}
	return 0;
}

int
xnv_pcap_check_file(const char *path, char *err, size_t errlen)
{
	uint8_t h[XNV_PCAP_HDR_LEN];
	char why[160];
	size_t len = 0;
	ssize_t n = 1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (len < sizeof(h) && n > 0) {
		n = read(fd, h + len, sizeof(h) - len);
		if (n > 0)
			len += (size_t)n;
		else if (n < 0 && errno == EINTR)
			n = 1;
	}
	if (n < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	if (xnv_pcap_check_header(h, len, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "%s: %s", path, why);
		return -1;
	}
	return 0;
}

int
xnv_pcap_check_dev(const char *dev, char *err, size_t errlen)
{
	static const char key[] = "rx_pcap=";
	char path[4096], why[512];
	const char *p = strchr(dev, ',');
	size_t n;

	if (strncmp(dev, "net_pcap", 8) != 0)
		return 0;
	while (p != NULL) {
		p++;
		n = strcspn(p, ",");
		if (strncmp(p, key, sizeof(key) - 1) == 0) {
			snprintf(path, sizeof(path), "%.*s",
				 (int)(n - (sizeof(key) - 1)),
				 p + sizeof(key) - 1);
			if (xnv_pcap_check_file(path, why, sizeof(why)) < 0) {
				snprintf(err, errlen, "rx_pcap %s", why);
				return -1;
			}
		}
		p = strchr(p, ',');
	}
	return 0;
}
