/* SPDX-License-Identifier: BSD-3-Clause */
/* xnv-xl save, restore, migrate, register (suspend.c). */
#ifndef XNV_XL_SUSPEND_H
#define XNV_XL_SUSPEND_H

#include <stdio.h>

/** Run command @p cmd ("save", "restore", "migrate", "register") with
 *  its arguments (@p argv[0] is the command).  Its exit status, or -1
 *  when @p cmd is none of these. */
int xnv_xl_suspend_cmd(const char *cmd, int argc, char **argv);

/** xnv-xl's usage text (xnv-xl.c). */
void xnv_xl_usage(FILE *f);

#endif
