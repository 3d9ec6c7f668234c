/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: the nfv_* keys of an xl domain config
 * (toolstack-hooks/nfv_cfg.c, parsed with libxlutil), on any text.
 * Checked: an accepted config names a domain, a group and a service that
 * are valid names, 1..16 instances and a backend domain name without
 * blank or '/' (or none); a refused one says why in one line
 * starting with the file's name.  libxlutil's own messages go to
 * /dev/null.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "nfv_cfg.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_name(const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);

	CHECK(n > 0 && n < cap);
	for (size_t i = 0; i < n; i++)
		CHECK(isalnum((unsigned char)s[i]) || strchr("-_.", s[i]));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	struct nfv_cfg c;
	char err[256];
	int rc;

	if (devnull == NULL)
		devnull = fopen("/dev/null", "w");
	CHECK(devnull != NULL);
	memset(err, 0x55, sizeof(err));
	err[sizeof(err) - 1] = '\0';
	rc = nfv_cfg_parse("fuzz.cfg", (const char *)data, size, devnull, &c,
			   err, sizeof(err));
	if (rc == 0) {
		CHECK(strnlen(c.name, sizeof(c.name)) > 0 &&
		      strnlen(c.name, sizeof(c.name)) < sizeof(c.name));
		check_name(c.group, sizeof(c.group));
		check_name(c.service, sizeof(c.service));
		CHECK(c.instances >= 1 && c.instances <= NFV_MAX_INSTANCES);
		/* nfv_backend: "" (Dom0) or a name with no blank or '/' */
		CHECK(strnlen(c.backend, sizeof(c.backend)) < sizeof(c.backend));
		for (size_t i = 0; c.backend[i] != '\0'; i++)
			CHECK(isgraph((unsigned char)c.backend[i]) &&
			      c.backend[i] != '/');
	} else {
		CHECK(rc == -1);
		CHECK(strncmp(err, "fuzz.cfg", 8) == 0);
		CHECK(strchr(err, '\n') == NULL);
	}
	return 0;
}
