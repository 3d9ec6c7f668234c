/* SPDX-License-Identifier: BSD-3-Clause */
/* Counters for people (a table) and programs (JSON) (stats.c). */
#ifndef XNV_STATS_H
#define XNV_STATS_H

#include <stdio.h>

struct xnv_core;

void xnv_stats_print(const struct xnv_core *c, FILE *f, double elapsed_s);
int xnv_stats_json(const struct xnv_core *c, const char *path,
		   double elapsed_s);

#endif /* XNV_STATS_H */
