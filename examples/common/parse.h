/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Parsing of the words rule files and options are made of: addresses,
 * prefixes ("10.0.0.0/8", "2001:db8::/32"), numbers, ranges ("1024-2047"),
 * MAC addresses.  Every parser returns NULL on success or a short reason
 * ("host bits set", "not a number") that callers put after the file name
 * and line number.
 */
#ifndef XNV_EX_PARSE_H
#define XNV_EX_PARSE_H

#include <stdint.h>

/** An IPv4 or IPv6 prefix; the address bytes past @p len are zero. */
struct prefix {
	uint8_t ver;		/**< 4 or 6 */
	uint8_t len;		/**< 0..32 or 0..128 */
	uint8_t addr[16];	/**< IPv4 in the first 4 bytes */
};

/** An IPv4 or IPv6 address into @p addr (16 bytes; IPv4 in the first 4,
 *  the rest zeroed) and @p ver. */
const char *parse_addr(const char *s, uint8_t *ver, uint8_t *addr);

/** "ADDR/LEN" or a bare address (a host: /32, /128).  Host bits must be
 *  zero: "10.0.0.1/8" is refused. */
const char *parse_prefix(const char *s, struct prefix *p);

/** @return 1 if address @p addr of version @p ver is inside @p p. */
int prefix_match(const struct prefix *p, unsigned ver, const uint8_t *addr);

/** A decimal number in [min, max]. */
const char *parse_u32(const char *s, uint32_t min, uint32_t max,
		      uint32_t *v);

/** "N", "LO-HI" or "any" (0-max) with every bound in [0, max]. */
const char *parse_range(const char *s, uint32_t max, uint32_t *lo,
			uint32_t *hi);

/** "02:00:00:00:00:01". */
const char *parse_mac(const char *s, uint8_t mac[6]);

/** "ADDR" of @p ver into @p buf (INET6_ADDRSTRLEN bytes); @return buf. */
char *addr_str(unsigned ver, const uint8_t *addr, char *buf);

#endif /* XNV_EX_PARSE_H */
