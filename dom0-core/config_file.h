/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The config file as text: the one reader of xnv-core's INI files
 * (config.c at start and for --check-config, config_flow.c for `flow
 * reload`).  One pass over the file checks the shape of every line,
 * remembers on which line each section and each key is, refuses a
 * section or a key given twice, and hands the result over as an
 * rte_cfgfile (built with rte_cfgfile_add_*, never rte_cfgfile_load:
 * that one says neither where nor why).  No EAL needed.
 *
 * Syntax: `[kind name]` headers, `key = value` lines; a line whose first
 * non-blank character is `#` is a comment, and so is everything from a
 * `;` to the end of a line.  Names and values are trimmed.
 *
 * Usage:
 *	struct xnv_ini ini;
 *
 *	if (xnv_ini_read(path, &ini, err, sizeof(err)) < 0)
 *		return -EINVAL;		// err: "path:7: empty key"
 *	v = rte_cfgfile_get_entry(ini.cf, "core", "burst");
 *	...
 *	xnv_ini_locate(&ini, err, sizeof(err));	// "[core] burst = x: ..."
 *						// -> "path:3: [core] burst..."
 *	xnv_ini_close(&ini);
 */
#ifndef XNV_CONFIG_FILE_H
#define XNV_CONFIG_FILE_H

#include <stddef.h>

#include <rte_cfgfile.h>

/** Format @p fmt into @p err.  @return -EINVAL (for `return
 *  xnv_cfg_fail(...)`).  The config readers' one error maker. */
int xnv_cfg_fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/** @p s without its leading blanks, its trailing ones cut in place. */
char *xnv_cfg_trim(char *s);

/* Where one section header (key "") or one key is. */
struct xnv_ini_at {
	char sec[CFG_NAME_LEN];
	char key[CFG_NAME_LEN];
	unsigned line;
};

struct xnv_ini {
	struct rte_cfgfile *cf;
	char path[256];
	struct xnv_ini_at *at;	/* in file order */
	unsigned n, cap;
};

/**
 * Read @p path into @p ini.
 * @return 0, or a negative errno with one line in @p err starting with
 *         "path:line: " (or "path: " when the file cannot be read);
 *         nothing is left to close then.
 */
int xnv_ini_read(const char *path, struct xnv_ini *ini, char *err,
		 size_t errlen);

/** The line of [@p sec] @p key (NULL: of its header), or 0 if absent. */
unsigned xnv_ini_line(const struct xnv_ini *ini, const char *sec,
		      const char *key);

/**
 * Put "path:line: " in front of @p err, a message of the form
 * "[SECTION] KEY ..." or "[SECTION]: KEY ..." (the line of KEY when
 * that section has such a key, else of the section's header), or
 * "path: " when it names no section of the file.  A message that
 * already starts with the path is left alone.
 */
void xnv_ini_locate(const struct xnv_ini *ini, char *err, size_t errlen);

/** What xnv_ini_read() allocated. */
void xnv_ini_close(struct xnv_ini *ini);

#endif /* XNV_CONFIG_FILE_H */
