/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The core's log sink: rte_log never waits for stderr.
 *
 * Once started (after rte_eal_init), DPDK's log stream is a FILE whose
 * writes only copy the bytes into a bounded buffer of lines (logbuf.h;
 * its size: [core] log_buffer_kib)
 * under a mutex; a control thread (a pthread, not an lcore) writes the
 * buffer out to fd 2 with blocking writes.  Whoever logs (the data-path
 * lcore, telemetry's thread, a PMD) never waits for a reader that does
 * not read.  When the buffer is full, whole lines are dropped
 * and counted (xnv_logsink_dropped, telemetry /xnv/stats log_dropped); the
 * thread writes "xnv-core: N log lines dropped (stderr was not being
 * read)" in their place.
 *
 * Before the sink starts and after it stops, DPDK writes to stderr itself.
 * So it does throughout when stderr is a regular file: a file takes every
 * write without waiting for a reader, and its lines are then visible the
 * moment they are logged (only pipes, sockets and terminals can stall).
 *
 * Usage:
 *	rte_eal_init(...);
 *	xnv_logsink_start(1 << 20, err, sizeof(err));
 *	... XLOG(...) ...
 *	rte_eal_cleanup();
 *	xnv_logsink_stop(2000);
 */
#ifndef XNV_LOGSINK_H
#define XNV_LOGSINK_H

#include <stddef.h>
#include <stdint.h>

/** How long the sink waits for stderr at exit (xnv_logsink_stop). */
#define XNV_LOGSINK_STOP_MS 2000

/**
 * Point DPDK's log stream at a sink of @p bytes and start its thread.
 * On error: -errno and one line in @p err; logging stays on stderr.
 */
int xnv_logsink_start(size_t bytes, char *err, size_t errlen);

/**
 * Write out what is buffered, waiting at most @p wait_ms for stderr, then
 * give DPDK's log stream back to stderr.  If stderr did not drain in
 * time, nothing more is written (the stream stays the sink, whose thread
 * is left blocked: the process is exiting).  Also run at exit if not
 * called before.
 */
void xnv_logsink_stop(unsigned wait_ms);

/** Lines dropped so far for want of room. */
uint64_t xnv_logsink_dropped(void);

#endif /* XNV_LOGSINK_H */
