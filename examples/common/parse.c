/* SPDX-License-Identifier: BSD-3-Clause */
/* Words of rule files and options (see parse.h). */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

const char *
parse_addr(const char *s, uint8_t *ver, uint8_t *addr)
{
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, s, addr) == 1) {
		*ver = 4;
		return NULL;
	}
	if (inet_pton(AF_INET6, s, addr) == 1) {
		*ver = 6;
		return NULL;
	}
	return "not an IPv4 or IPv6 address";
}

const char *
parse_prefix(const char *s, struct prefix *p)
{
	char a[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(s, '/'), *err;
	uint32_t len, bits, i;

	if (slash == NULL) {
		if ((err = parse_addr(s, &p->ver, p->addr)) != NULL)
			return err;
		p->len = (uint8_t)(p->ver == 4 ? 32 : 128);
		return NULL;
	}
	if ((size_t)(slash - s) >= sizeof(a))
		return "not an IPv4 or IPv6 address";
	memcpy(a, s, (size_t)(slash - s));
	a[slash - s] = '\0';
	if ((err = parse_addr(a, &p->ver, p->addr)) != NULL)
		return err;
	bits = p->ver == 4 ? 32 : 128;
	if (parse_u32(slash + 1, 0, bits, &len) != NULL)
		return p->ver == 4 ? "prefix length is not 0..32" :
		       "prefix length is not 0..128";
	p->len = (uint8_t)len;
	for (i = len; i < bits; i++)
		if (p->addr[i / 8] & (0x80u >> (i % 8)))
			return "host bits set after the prefix length";
	return NULL;
}

const char *
parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *v)
{
	char *end;
	unsigned long long x;

	if (*s < '0' || *s > '9')
		return "not a number";
	x = strtoull(s, &end, 10);
	if (*end != '\0')
		return "not a number";
	if (x < min || x > max)
		return "number out of range";
	*v = (uint32_t)x;
	return NULL;
}

const char *
parse_range(const char *s, uint32_t max, uint32_t *lo, uint32_t *hi)
{
	char a[16];
	const char *dash = strchr(s, '-');

	if (strcmp(s, "any") == 0) {
		*lo = 0;
		*hi = max;
		return NULL;
	}
	if (dash == NULL) {
		if (parse_u32(s, 0, max, lo) != NULL)
			return "not a number or range in range";
		*hi = *lo;
		return NULL;
	}
	if ((size_t)(dash - s) >= sizeof(a))
		return "not a range LO-HI";
	memcpy(a, s, (size_t)(dash - s));
	a[dash - s] = '\0';
	if (parse_u32(a, 0, max, lo) != NULL ||
	    parse_u32(dash + 1, 0, max, hi) != NULL)
		return "not a range LO-HI within bounds";
	if (*lo > *hi)
		return "range LO-HI with LO > HI";
	return NULL;
}

const char *
parse_mac(const char *s, uint8_t mac[6])
{
	unsigned b[6];
	char end;
	int i;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3],
		   &b[4], &b[5], &end) != 6 || strlen(s) != 17)
		return "not a MAC address xx:xx:xx:xx:xx:xx";
	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return NULL;
}

char *
addr_str(unsigned ver, const uint8_t *addr, char *buf)
{
	inet_ntop(ver == 6 ? AF_INET6 : AF_INET, addr, buf, INET6_ADDRSTRLEN);
	return buf;
}
