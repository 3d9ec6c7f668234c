/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xen backend, both sides: numbers read from XenStore nodes the other
 * side writes (xen.h).  A guest reads Dom0's answer, Dom0 a guest's
 * request and the paths of its watch events; neither trusts the other,
 * so a value is a number only if it is nothing else.  No Xen library
 * is needed here (test_xen_keys runs it without Xen), but it is built
 * with the Xen parts only (HAVE_XEN).
 */
#include <errno.h>

#include "gntshare/xen.h"

int
gnts_xs_uint(const char *v, size_t len, uint32_t max, uint32_t *out)
{
	uint64_t x = 0;
	size_t i;

	/* "0", or a digit 1-9 and more digits: no sign, blank, NUL or
	 * leading zero (so one number has one spelling). */
	if (len == 0 || (v[0] == '0' && len > 1))
		return -EINVAL;
	for (i = 0; i < len; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -EINVAL;
		/* x <= max <= UINT32_MAX here: no overflow in 64 bits */
		x = x * 10 + (uint64_t)(v[i] - '0');
		if (x > max)
			return -EINVAL;
	}
	*out = (uint32_t)x;
	return 0;
}

int
gnts_xen_bell_parse(const char *port, size_t plen, const char *dom,
		    size_t dlen, uint32_t *out_port, uint32_t *out_dom)
{
	uint32_t p, d = 0;

	/* Port 0 is never bound (Xen reserves it). */
	if (gnts_xs_uint(port, plen, GNTS_XEN_EVTCHN_MAX, &p) < 0 || p == 0)
		return -EINVAL;
	if (dom != NULL && gnts_xs_uint(dom, dlen, GNTS_XEN_MAX_DOMID, &d) < 0)
		return -EINVAL;
	*out_port = p;
	*out_dom = d;
	return 0;
}
