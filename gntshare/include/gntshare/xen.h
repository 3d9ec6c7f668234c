/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gntshare xen backend: grant references + XenStore rendezvous.
 *
 * Dom0 (xnv-core) pins and grants its regions with the gntshare kernel
 * module (/dev/xen/gntshare, see kmod.h): one grant per (region, domain),
 * one ref per 4 KiB frame; the hypervisor refuses a ref to every other
 * domain.  A guest maps refs with gntdev (libxengnttab).
 *
 * Without the module, gntalloc (/dev/xen/gntalloc) is the fallback: it
 * can only allocate new pages granted to one domain, so each region is
 * made for its domain (gnts_region_create_for()) and none is shared; the
 * core then gives every NF a pool of its own.  Guests see no difference:
 * refs are refs.
 *
 * Who is a "domain" for the region API: one NF device of a Xen domain,
 * GNTS_XEN_PEER(domid, devid).  Each device gets grants of its own (its own
 * refs), so one can be revoked while a sibling device keeps its mapping.
 *
 * XenStore, one directory pair per NF device (xenbus conventions):
 *
 *   /local/domain/<B>/backend/xnv/<domid>/<devid>/   the backend writes
 *       (B: the domain xnv-core runs in, Dom0 or a driver domain: its
 *       own "domid" node; an NF domain's nfv_backend names it)
 *       frontend, frontend-id      where the guest's half lives
 *       name, service, trust-group the domain's nfv_* settings (xnv-xl)
 *       state                      XenbusState, see below
 *     once connected (core):
 *       ring-ref = "r0 r1 ..."     refs of the ring region's pages
 *       ring-pages, ring-size      its page count; descriptors per ring
 *       pool-dir-refs = "d0 .."    refs of the directory pages: the pool's
 *                                  refs as little-endian u32, 1024 per page
 *       pool-pages, pool-bufs, buf-size, service-id, nf-id, nf-name,
 *       n-ports, request-id (the request this answers)
 *       event-channel              the core's port of the NF's doorbell,
 *                                  when it asked and one could be bound;
 *                                  removed when not
 *     on detach (core):
 *       detach-reason, detach-status (negative errno, -ESHUTDOWN = clean,
 *                                  -EAGAIN = come back after a resume)
 *       error                      why a connection was refused
 *     by xnv-xl in Dom0, never the guest:
 *       suspend = "save"|"migrate" the domain is about to be saved or
 *                                  migrated: the core lets the NF go
 *                                  (GNTS_DETACH_SUSPEND) and attaches
 *                                  none while the node is there
 *   /local/domain/<domid>/device/xnv/<devid>/        the guest writes
 *       backend, backend-id        (written by xnv-xl, read by the guest:
 *                                  it maps backend-id's grants and binds
 *                                  its event channel)
 *       alloc-bufs, service        the NF's own attach request (service
 *                                  may be empty; the instance name is
 *                                  <backend name>.<devid>, never the
 *                                  guest's)
 *       request-bell               "1": a doorbell, please; "0": none
 *       request-id                 a fresh id per attach attempt: the
 *                                  core's answer (state, request-id,
 *                                  error or refs) is written in one
 *                                  transaction and read in one
 *       state
 *
 * States: xnv-xl creates both halves in Initialising (1).  The core moves
 * the backend to InitWait (2) when it has checked the domain's service and
 * group.  The NF writes its request and sets Initialised (3); the core
 * grants, publishes the refs and sets Connected (4); the NF maps and sets
 * Connected (4).  An NF that leaves unmaps first, then sets Closed (6); the
 * core revokes and sets Closed (6), and attaches the next NF of that device
 * when the frontend goes to Initialised again.  When the core detaches an
 * NF it writes detach-reason/-status and sets Closing (5) then Closed (6).
 *
 * Save and migration (xnv-xl save / migrate): xnv-xl writes the suspend
 * node of each device; the core detaches the NF as above with
 * GNTS_DETACH_SUSPEND in the ring's control line and detach-status
 * -EAGAIN; the NF unmaps everything, sets Closed and waits; xnv-xl waits
 * for that, then runs xl.  The NF attaches again (Initialised) once its
 * frontend's backend directory has no suspend node: the node removed
 * (the save or migration failed, or xl save -c kept the domain), or the
 * domain resumed with a new domid whose devices xnv-xl registered anew.
 *
 * Doorbells (bell.h), as netfront/netback: an NF that writes
 * request-bell "1" gets one event channel per device.  The core binds
 * an unbound port for the domain before the attach callback and
 * publishes its number in event-channel with the rest of the answer;
 * the NF binds it interdomain (to backend-id, normally 0).  Kicks go
 * both ways over that one channel.  The core closes its port after the
 * device's death callback returned (the NF left, was detached, its
 * domain died) and before a new request of the device is attached, so
 * each attach gets a fresh port.  Either side that cannot bind (no
 * xen-evtchn, a bad or stale number) says so in one line and polls.
 *
 * Permissions: the backend directory is owned by B and readable by its
 * domain; the frontend directory is owned by the domain and readable by B.
 * Nobody else sees either (but Dom0).  A driver domain B also needs read
 * permission on @releaseDomain to see NF domains die; xnv-xl gives it.
 */
#ifndef GNTSHARE_XEN_H
#define GNTSHARE_XEN_H

#include <stddef.h>
#include <stdint.h>

#include "gntshare.h"
#include "proto.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GNTS_XEN_MAX_DOMID    0x7fefu	/* DOMID_FIRST_RESERVED - 1 */
#define GNTS_XEN_REFS_PER_DIR 1024u	/* u32 refs in one directory page */
#define GNTS_XEN_PAGE         4096u
#define GNTS_XEN_GNTDEV_MAX   65536u	/* grants gntdev maps in one request */
/* highest event channel port (FIFO ABI: 2^17 ports; 2-level: 4096) */
#define GNTS_XEN_EVTCHN_MAX   0x1ffffu

/**
 * A number the other side wrote in XenStore, parsed strictly (both sides
 * read values they did not write): exactly @p len bytes of decimal
 * digits, no sign, blank or leading zero ("0" itself is fine), at most
 * @p max.  @return 0 and *@p out, or -EINVAL.
 */
int gnts_xs_uint(const char *v, size_t len, uint32_t max, uint32_t *out);

/**
 * The doorbell a guest is offered: @p port (the `event-channel` value,
 * @p plen bytes) a port from 1 to GNTS_XEN_EVTCHN_MAX, of domain @p dom
 * (its `backend-id`, @p dlen bytes; NULL: 0, Dom0), both by
 * gnts_xs_uint().  @return 0 and *@p out_port, *@p out_dom, or -EINVAL.
 */
int gnts_xen_bell_parse(const char *port, size_t plen, const char *dom,
			size_t dlen, uint32_t *out_port, uint32_t *out_dom);

/*
 * What a guest's XenStore writes may cost the core (xen_server.c,
 * xen_events.c).  A write to a frontend state node fires the core's
 * watch; each domain may have GNTS_XEN_EVENT_RATE such events acted on
 * per second, GNTS_XEN_EVENT_BURST at once after a quiet spell.  An
 * event over that is not acted on at once: its device is stepped once
 * the domain has a token again, reading the state as it is then, so
 * nothing is lost, only late (by 1 / rate at most after a flood ends).
 *
 * Why these numbers: an NF device changes state about 4 times per
 * attach (its watch set up, Initialised, Connected, Closed), so 10/s is
 * two or three re-attaches a second per domain, more than an NF that
 * maps a pool's grants each time can do; the burst lets the 16 devices
 * of a domain start together.  What it bounds: a hostile domain makes
 * the control thread step its devices 10 times a second, a few XenStore
 * reads each; the budget is per domain, so n hostile domains cost n
 * times that.  At most one log line per domain per second says how
 * many events came.
 */
#define GNTS_XEN_EVENT_RATE   10u	/* frontend events/s of one domain */
#define GNTS_XEN_EVENT_BURST  64u	/* 16 devices x 4 */

#define GNTS_XEN_PEER(domid, devid) \
	((gnts_peer_t)(((uint32_t)(domid) << 4) | ((uint32_t)(devid) & 0xfu)))
#define GNTS_XEN_DOMID(dom)  ((uint16_t)((dom) >> 4))
#define GNTS_XEN_DEVID(dom)  ((unsigned)((dom) & 0xfu))

/* ---- Dom0: grants through the gntshare kernel module ------------------ */

/**
 * Grant regions through the gntshare module from now on (process-wide):
 * gnts_region_grant() then pins and grants the region's frames to
 * GNTS_XEN_DOMID(dom), gnts_region_revoke() ends them.
 * @return 0, or -ENOENT (module not loaded), -EPROTO (other ABI), with a
 *   one-line reason in @p err.
 */
int gnts_kgrant_enable(char *err, size_t errlen);

/**
 * Grant through gntalloc from now on (process-wide; the fallback when the
 * gntshare module is not loaded): gnts_region_create_for() then allocates
 * the region's pages with xengntshr_share_pages() for that domain, and
 * regions are not shareable.  The xen server enables it by itself when
 * the module's device is missing (and logs that it did).
 * @return 0, or -ENOENT (xen-gntalloc not loaded), -EBUSY (the module is
 *   in use already), with a one-line reason in @p err.
 */
int gnts_galloc_enable(char *err, size_t errlen);

/* ---- the rendezvous ------------------------------------------------------ */

/*
 * Both sides are reached through backend.h only: gnts_srv_open("xen")
 * in Dom0 (xen_server.c), gnts_cli_attach("xen") in the guest
 * (xen_client.c).  In the reply of a xen attach, ring_ref / pool_ref are
 * these names of the two regions the guest maps:
 */
#define GNTS_XEN_REF_RING 1u
#define GNTS_XEN_REF_POOL 2u

#ifdef __cplusplus
}
#endif

#endif /* GNTSHARE_XEN_H */
