/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libxnv: is the core still there, does it still want us, and coming back
 * when it restarts (--reattach).
 *
 * Two ways to learn that the core let go of this NF: the control line of
 * the ring region (gntshare/ring.h: the core writes a GNTS_DETACH_* code
 * before it takes our buffers back; the only way in Xen mode), and in host
 * mode the socket (a DETACH notice with the reason in words, or a hang-up
 * when the core died).  The heartbeat in the same line tells the core we
 * are alive; io.c bumps it from the loop, busy or idle.
 *
 * --reattach (env XNV_REATTACH=1): when the core itself went away (it shut
 * down, or died), wait for a core on the same socket and attach again.
 * Not when the core detached this NF on purpose (quarantine, heartbeat):
 * coming back would only repeat that.  Off by default: an NF's state may
 * not fit a new core's config, and a supervisor restarting the NF is the
 * usual answer; see <xnv/nf.h>.
 *
 * A save or migration of the NF's domain (Xen, xnv-xl save / migrate) is
 * different: the core lets go of the NF telling it to come back
 * (GNTS_DETACH_SUSPEND, detach-status -EAGAIN), the NF unmaps everything
 * (the domain must not map another domain's grants when it is saved) and
 * attaches again through the same device once its domain runs again,
 * with or without --reattach: its process was frozen and carries on.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "nf_pvt.h"

static const char *
code_words(uint32_t code)
{
	switch (code) {
	case GNTS_DETACH_SHUTDOWN: return "xnv-core is shutting down";
	case GNTS_DETACH_QUARANTINE: return "quarantined (bad descriptors or "
				     "ring indices)";
	case GNTS_DETACH_HEARTBEAT: return "no heartbeat (NF stopped or hung "
				    "too long)";
	case GNTS_DETACH_HOARD: return "quarantined: held its quota of "
				"buffers and returned none for too long";
	case GNTS_DETACH_SUSPEND: return "its domain is being saved or "
				  "migrated";
	default: return "detached (see xnv-core's log)";
	}
}

static void
sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The rendezvous' own view (the socket, or the backend state in
 * XenStore). */
static int
peer_alive(struct xnv_nf *nf, char *err, size_t errlen)
{
	return gnts_cli_alive(nf->cli, err, errlen);
}

int
libxnv_core_alive(struct xnv_nf *nf)
{
	char err[GNTS_ERR_LEN];
	uint32_t code = nf->ctl != NULL ? gnts_ring_detached(nf->ctl) : 0;
	int i;

	if (code == GNTS_DETACH_NONE) {
		if (peer_alive(nf, err, sizeof(err)))
			return 1;
	} else {
		/* The socket, when there is one, has the reason in words;
		 * the core sends it right after writing the code. */
		for (i = 0; i < 20; i++) {
			if (!peer_alive(nf, err, sizeof(err)))
				break;
			sleep_ms(5);
		}
		if (i == 20)
			snprintf(err, sizeof(err), "%s", code_words(code));
	}
	nf->gone_code = code;
	LOG(WARNING, "%s: detached by the core: %s", nf->name, err);
	return 0;
}

int
libxnv_gone_rc(const struct xnv_nf *nf)
{
	if (nf->gone_code == GNTS_DETACH_SHUTDOWN)
		return 0;
	return gnts_cli_gone_status(nf->cli) == -ESHUTDOWN ? 0 : -ECONNRESET;
}

/* The core let go because the domain is being saved or migrated. */
static int
suspended(const struct xnv_nf *nf)
{
	return nf->cli != NULL && (nf->gone_code == GNTS_DETACH_SUSPEND ||
				   gnts_cli_gone_status(nf->cli) == -EAGAIN);
}

int
libxnv_may_reattach(const struct xnv_nf *nf)
{
	/* Only where the backend allows it (host: a new connection; xen:
	 * the domain's device is re-requested by restarting the NF), or
	 * after a save or migration. */
	if (suspended(nf))
		return 1;
	return nf->reattach && nf->cli != NULL &&
	       (gnts_cli_flags(nf->cli) & GNTS_CLI_REATTACH) &&
	       (nf->gone_code == GNTS_DETACH_NONE ||
		nf->gone_code == GNTS_DETACH_SHUTDOWN);
}

/* Drop everything of the old attachment (mappings, socket, buffers in
 * hand: they belong to a core that is gone). */
static void
let_go(struct xnv_nf *nf)
{
	gnts_cli_unmap(nf->cli, nf->pool, nf->pool_bytes);
	gnts_cli_unmap(nf->cli, nf->ring_va, nf->ring_bytes);
	gnts_cli_close(nf->cli);
	nf->pool = NULL;
	nf->ring_va = NULL;
	nf->ctl = NULL;
	nf->stat_shm = NULL;
	nf->cli = NULL;
	nf->n_spare = nf->n_sends = 0;
	nf->gone_code = GNTS_DETACH_NONE;
}

int
libxnv_wait_core(struct xnv_nf *nf, char *err, size_t errlen)
{
	unsigned wait_ms = 50;
	int rc;

	while (!nf->stop && !libxnv_signalled) {
		rc = gnts_cli_attach(nf->backend, &nf->cfg, &nf->req, &nf->att,
				     &nf->cli, err, errlen);
		/* Nobody there (yet), or a core going away (it may be
		 * shutting down as we connect): try again.  A core that
		 * answers and refuses will refuse again.  Resuming: the
		 * domain still suspending (-EHOSTDOWN), or running again
		 * with its devices not registered yet (-ENODEV, -ENOENT):
		 * asked every 100 ms, a XenStore read or two. */
		if (nf->resuming && (rc == -ENODEV || rc == -ENOENT ||
				     rc == -EHOSTDOWN)) {
			sleep_ms(100);
			continue;
		}
		if (rc != -EHOSTDOWN && rc != -ECONNRESET &&
		    rc != -ETIMEDOUT && rc != -ESHUTDOWN)
			return rc;
		if (nf->resuming)	/* the domain runs again, but */
			LOG(WARNING, "%s: attach: %s; asking again", nf->name,
			    err);
		sleep_ms(wait_ms);
		wait_ms = wait_ms < 500 ? wait_ms * 2 : 1000;
	}
	return -EINTR;
}

int
libxnv_reattach(struct xnv_nf *nf)
{
	char err[GNTS_ERR_LEN];
	int rc;

	nf->resuming = suspended(nf);
	if (nf->resuming && gnts_cli_device(nf->cli) >= 0)
		nf->cfg.dev = gnts_cli_device(nf->cli);	/* the same one */
	let_go(nf);
	if (nf->resuming)
		LOG(INFO, "%s: waiting for the domain to run again (saved or "
		    "migrated), to attach through device %d", nf->name,
		    nf->cfg.dev);
	else
		LOG(INFO, "%s: --reattach: waiting for xnv-core at %s",
		    nf->name, nf->sock);
	rc = libxnv_wait_core(nf, err, sizeof(err));
	nf->resuming = 0;
	if (rc == 0) {
		rc = libxnv_map(nf);
		if (rc < 0)
			return rc;	/* said why */
		LOG(INFO, "%s: re-attached as domain %u", nf->name,
		    nf->att.domid);
	} else if (rc != -EINTR) {
		LOG(ERR, "%s: re-attach refused: %s", nf->name, err);
	}
	return rc;
}
