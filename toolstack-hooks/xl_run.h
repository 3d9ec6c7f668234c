/* SPDX-License-Identifier: BSD-3-Clause */
/* xnv-xl running xl (env XNV_XL names another binary), and reading a
 * small file.  Every function prints its own one-line error only where
 * it says so. */
#ifndef XNV_XL_RUN_H
#define XNV_XL_RUN_H

#include <stddef.h>

/* The xl binary (XNV_XL, default "xl"). */
extern const char *xl_bin;

/** Read @p path whole (at most 1 MiB) into *@p data (free it), its
 *  length in *@p len.  0, or -1 said why. */
int xl_read_file(const char *path, char **data, size_t *len);

/** Run @p argv (NULL-terminated); with @p out, capture the first line of
 *  its stdout and drop its stderr.  Its exit status (127: could not run,
 *  said; 128: killed), or -1. */
int xl_run(char *const argv[], char *out, size_t outlen);

/** The domid of the domain named @p name (`xl domid`), or -1. */
int xl_domid(const char *name);

/** `xl VERB ARG`: its exit status. */
int xl_simple(const char *verb, const char *arg);

#endif
