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
 * Every line starts with its UTC time and level (gnts_log_stamp(),
 * docs/DESIGN.md "Log lines"): "2026-11-24T21:50:54.123Z INFO xnv-core:
 * ...", "... WARN EAL: ...".  The stream is ours from before rte_eal_init
 * (xnv_logsink_open), so EAL's own lines are stamped too.  Until the
 * buffer starts and once it has drained at exit, the stream writes each
 * stamped line to fd 2 itself; so it does throughout when stderr is a
 * regular file: a file takes every write without waiting for a reader,
 * and its lines are then visible the moment they are logged (only pipes,
 * sockets and terminals can stall).
 *
 * Usage:
 *	xnv_logsink_open(err, sizeof(err));
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
 * Point DPDK's log stream at the stamping stream (lines to fd 2 at once).
 * Before rte_eal_init.  On error: -errno and one line in @p err; DPDK
 * keeps its own stream.
 */
int xnv_logsink_open(char *err, size_t errlen);

/**
 * Buffer the stream's lines in @p bytes and start the thread that writes
 * them out (opens the stream first if need be).  On error: -errno and one
 * line in @p err; lines still go to fd 2, at once.
 */
int xnv_logsink_start(size_t bytes, char *err, size_t errlen);

/**
 * Write out what is buffered, waiting at most @p wait_ms for stderr, then
 * write lines to fd 2 at once again.  If stderr did not drain in time,
 * nothing more is written (lines stay buffered, the thread is left
 * blocked: the process is exiting).  Also run at exit if not called
 * before.
 */
void xnv_logsink_stop(unsigned wait_ms);

/** Lines dropped so far for want of room. */
uint64_t xnv_logsink_dropped(void);

#endif /* XNV_LOGSINK_H */
