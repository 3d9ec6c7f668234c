/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xen backend, Dom0 side: each NF device's doorbell (xen.h, "Doorbells";
 * the event channel itself: bell_evtchn.c).  The NF asks with its
 * request-bell node; the core's end is made before the attach callback
 * and handed to it, its port published with the answer (xen_publish.c),
 * and closed when the owner let go of it: after the device's death
 * callback, when the attach fails, and before the next request of the
 * device gets a port of its own (xen_server.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "xen_server_pvt.h"

int
gnts_xen_bell_request(struct gnts_xen_server *s, struct xdev *d,
		      struct gnts_attach_req *req, char *err, size_t errlen)
{
	char v[16], esc[GNTS_ESC_LEN(15)];
	uint32_t on;
	int rc = gnts_xs_read(s, d->fe, GNTS_XS_REQUEST_BELL, v, sizeof(v));

	if (rc == -ENOENT)	/* an NF older than doorbells */
		return 0;
	/* The guest wrote it: "1" or "0", nothing else.  gnts_xs_read
	 * refused a longer value and one holding a NUL: strlen is it. */
	if (rc == 0 && gnts_xs_uint(v, strlen(v), 1, &on) == 0) {
		req->flags |= on ? GNTS_REQ_BELL : 0;
		return 0;
	}
	snprintf(err, errlen, "request-bell '%s' is not 0 or 1",
		 rc < 0 ? "..." : gnts_esc(v, 15, esc, sizeof(esc)));
	return -EINVAL;
}

void
gnts_xen_bell_close(struct xdev *d)
{
	/* Our port unbound: the NF's end is left unbound, and Xen drops
	 * its kicks from now on. */
	gnts_bell_close(d->bell);
	d->bell = NULL;
}

void
gnts_xen_bell_offer(struct xdev *d, const struct gnts_attach_req *req)
{
	/* Never two at once: a port left from an earlier attach goes. */
	gnts_xen_bell_close(d);
	if (!(req->flags & GNTS_REQ_BELL))
		return;
	d->bell = gnts_bell_evtchn_offer(d->domid, &d->bell_port);
	if (d->bell == NULL)
		gnts_log(GNTS_LOG_WARNING, "domain %u device %u: no doorbell, "
			 "the NF polls: cannot offer it an event channel: %s "
			 "(is xen-evtchn loaded?)", d->domid, d->devid,
			 strerror(errno));
}
