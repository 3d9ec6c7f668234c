/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What an NF and xnv-core tell each other when the NF attaches.
 *
 * These are the same facts the Xen backend publishes in XenStore
 * (DESIGN.md: ring-ref, pool-pages, buf-size, trust-group, service-id);
 * in host mode they travel in the ATTACH request and reply on the unix
 * socket.  Strings are NUL-terminated within their arrays; a receiver
 * that finds no NUL rejects the message.
 */
#ifndef GNTSHARE_ATTACH_H
#define GNTSHARE_ATTACH_H

#include <stdint.h>

#include "gntshare.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GNTS_ATTACH_NAME_LEN 32u

/* NF -> core */
struct gnts_attach_req {
	char name[GNTS_ATTACH_NAME_LEN];	/* instance name, for logs */
	char service[GNTS_ATTACH_NAME_LEN];	/* service it provides */
	char group[GNTS_ATTACH_NAME_LEN];	/* trust group it belongs to */
	uint32_t alloc_bufs;			/* empty buffers to keep in the
						 * NF's free ring (0: none) */
};

/* core -> NF */
struct gnts_attach_rsp {
	uint32_t domid;		/* domain id the core assigned */
	uint32_t nf_id;		/* NF slot in the core */
	uint32_t service_id;	/* numeric id of the service */
	uint32_t ring_ref;	/* reference of the NF's ring region */
	uint32_t ring_size;	/* descriptors per ring */
	uint32_t pool_ref;	/* reference of the group's packet pool */
	uint32_t pool_bufs;	/* buffers in the pool */
	uint32_t buf_size;	/* bytes per buffer (headroom included) */
	uint32_t n_ports;	/* ports an NF may name in XNV_OUT */
	uint32_t reserved;
	uint64_t ring_bytes;	/* size of the ring region mapping */
	uint64_t pool_bytes;	/* size of the pool region mapping */
};

#ifdef __cplusplus
}
#endif

#endif /* GNTSHARE_ATTACH_H */
