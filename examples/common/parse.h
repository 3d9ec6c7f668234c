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
#include <string.h>

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

/* The @p n (4 or 8) bytes at @p p as a big-endian number, in the top
 * bytes of the word: one load and one byte swap (a loop of byte loads,
 * which -O2 does not unroll, was a sixth of the nat's handler). */
static inline uint64_t
be_word(const uint8_t *p, unsigned n)
{
	uint64_t v;
	uint32_t h;

	if (n == 4) {
		memcpy(&h, p, 4);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		h = __builtin_bswap32(h);
#endif
		return (uint64_t)h << 32;
	}
	memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

/* The top @p bits (0..64) of a 64-bit word set. */
static inline uint64_t
top_bits(unsigned bits)
{
	return bits == 0 ? 0 : ~0ull << (64 - (bits > 64 ? 64 : bits));
}

/** @return 1 if address @p addr of version @p ver is inside @p p.  Inline,
 *  masked compares of 64-bit words (an IPv4 address in the top half of
 *  one): on the packet path of nat, lb and the firewall. */
static inline int
prefix_match(const struct prefix *p, unsigned ver, const uint8_t *addr)
{
	if (ver != p->ver)
		return 0;
	if (ver == 4)
		return ((be_word(addr, 4) ^ be_word(p->addr, 4)) &
			top_bits(p->len)) == 0;
	return ((be_word(addr, 8) ^ be_word(p->addr, 8)) &
		top_bits(p->len)) == 0 &&
	       (p->len <= 64 || ((be_word(addr + 8, 8) ^
				  be_word(p->addr + 8, 8)) &
				 top_bits(p->len - 64u)) == 0);
}

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
