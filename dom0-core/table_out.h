/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SIGUSR1's statistics table on stdout, written by a thread of its own:
 * the main lcore makes the table in memory (with the workers parked) and
 * hands it over, so a stdout nobody reads blocks that thread, never the
 * data path or the control plane.  One table is out at a time: one asked
 * for while the last is still being written is skipped, said in the log
 * (the first of a run of them, then how many when stdout takes one).
 */
#ifndef XNV_TABLE_OUT_H
#define XNV_TABLE_OUT_H

#include <stddef.h>

/* Write @p len bytes of @p buf (from malloc: taken, freed after) to
 * stdout from the writer thread.  @return 0 handed over; -EBUSY the last
 * table is still being written (this one freed and skipped); -errno no
 * thread could be made (freed, said). */
int xnv_table_out(char *buf, size_t len);

/* Wait until the table being written, if any, is out (before anything
 * else writes to stdout: the table at exit). */
void xnv_table_out_wait(void);

#endif /* XNV_TABLE_OUT_H */
