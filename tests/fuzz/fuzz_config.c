/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: xnv-core's INI config (dom0-core/config.c) on any
 * file.  The input is written to a memfd and loaded by path, as the core
 * does.  Checked: an accepted config is one the core can run (at least
 * one port, ring size a power of two, every chain step names something
 * declared, service ids map both ways, allow lists within bounds,
 * may_send_to naming declared groups, a socket mode its socket_group
 * can connect with, no device on two ports, warnings whole lines naming
 * the file); a refused one says why in one line.  Leaks on any path are found by LeakSanitizer.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_ok(const struct xnv_config *c)
{
	CHECK(c->n_ports >= 1 && c->n_ports <= XNV_MAX_PORTS);
	CHECK(c->n_groups >= 1 && c->n_groups <= XNV_MAX_GROUPS);
	CHECK(c->n_services <= XNV_MAX_SERVICES);
	CHECK(c->ring_size >= 16 && (c->ring_size & (c->ring_size - 1)) == 0);
	CHECK(c->burst >= 1 && c->burst <= GNTS_BURST_MAX);
	for (int i = 0; i < c->n_ports; i++) {
		const struct xnv_port_cfg *p = &c->ports[i];

		CHECK(p->group < c->n_groups);
		CHECK(p->chain.n <= XNV_MAX_CHAIN);
		CHECK(memchr(p->dev, '\0', sizeof(p->dev)) != NULL);
		for (int s = 0; s < p->chain.n; s++) {
			const struct xnv_step *st = &p->chain.s[s];

			CHECK(st->kind != XNV_STEP_SERVICE ||
			      st->id < c->n_services);
			CHECK(st->kind != XNV_STEP_PORT || st->id < c->n_ports);
			CHECK(st->kind >= XNV_STEP_SERVICE &&
			      st->kind <= XNV_STEP_DROP);
		}
	}
	for (int i = 0; i < c->n_services; i++) {
		CHECK(c->service_by_id[c->services[i].id] == i);
		CHECK(c->services[i].access.uids.n <= XNV_MAX_IDS);
		CHECK(c->services[i].access.gids.n <= XNV_MAX_IDS);
	}
	/* who may join and send: within the lists, to declared groups */
	for (int i = 0; i < c->n_groups; i++) {
		CHECK(c->groups[i].access.uids.n <= XNV_MAX_IDS);
		CHECK(c->groups[i].access.gids.n <= XNV_MAX_IDS);
		CHECK(c->groups[i].may_send_to >> c->n_groups == 0);
	}
	/* one device per port; warnings: whole lines, each with its place */
	for (int i = 0; i < c->n_ports; i++)
		for (int j = 0; j < i; j++) {
			size_t n = strcspn(c->ports[j].dev, ",");

			CHECK(strncmp(c->ports[i].dev, c->ports[j].dev, n) != 0 ||
			      (c->ports[i].dev[n] != '\0' &&
			       c->ports[i].dev[n] != ','));
		}
	CHECK(c->n_warnings <= XNV_MAX_WARNINGS);
	for (unsigned i = 0; i < c->n_warnings; i++) {
		CHECK(memchr(c->warnings[i], '\0', XNV_WARNING_LEN) != NULL);
		CHECK(strchr(c->warnings[i], '\n') == NULL);
		CHECK(strncmp(c->warnings[i], c->path, strlen(c->path)) == 0);
	}
	CHECK(c->socket_mode <= 0777);
	CHECK(!c->socket_group_set || (c->socket_mode & 0020));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct xnv_config cfg;
	char path[64], err[512];
	int fd = memfd_create("fuzz.ini", MFD_CLOEXEC), rc;

	CHECK(fd >= 0);
	CHECK(write(fd, data, size) == (ssize_t)size);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	memset(err, 0x55, sizeof(err));
	err[sizeof(err) - 1] = '\0';
	rc = xnv_config_load(path, &cfg, err, sizeof(err));
	close(fd);
	if (rc == 0) {
		check_ok(&cfg);
		xnv_config_free(&cfg);
	} else {
		CHECK(rc < 0);
		CHECK(strlen(err) > 0 && strchr(err, '\n') == NULL);
	}
	return 0;
}
