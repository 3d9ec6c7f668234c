/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The client side's backend registry and handle (backend.h), linked into
 * libxnv.  The Xen client is referenced weakly: a static NF linked without
 * it (and without the Xen libraries) runs in host mode; pkg-config's
 * libxnv.pc pulls it in where it was built (-Wl,-u,gnts_xen_cli_ops).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends.h"

extern const struct gnts_cli_ops gnts_xen_cli_ops __attribute__((weak));

struct gnts_cli {
	const struct gnts_cli_ops *ops;
	void *impl;
};

/* In the order auto tries them. */
static const struct gnts_cli_ops *
backend_at(unsigned i)
{
	switch (i) {
	case 0: return &gnts_xen_cli_ops;	/* NULL when not linked in */
	case 1: return &gnts_host_cli_ops;
	default: return NULL;
	}
}

#define N_BACKENDS 2u

const char *
gnts_cli_kinds(void)
{
	static char kinds[64];
	size_t o = 0;
	unsigned i;

	for (i = N_BACKENDS; i-- > 0 && o < sizeof(kinds);)
		if (backend_at(i) != NULL)
			o += (size_t)snprintf(kinds + o, sizeof(kinds) - o,
					      "%s%s", o ? ", " : "",
					      backend_at(i)->name);
	return kinds;
}

const struct gnts_cli_ops *
gnts_cli_backend(const char *kind)
{
	const struct gnts_cli_ops *ops;
	unsigned i;

	for (i = 0; i < N_BACKENDS; i++) {
		ops = backend_at(i);
		if (ops == NULL)
			continue;
		if (kind == NULL || strcmp(kind, "auto") == 0) {
			if (ops->available == NULL || ops->available())
				return ops;
		} else if (strcmp(ops->name, kind) == 0) {
			return ops;
		}
	}
	return NULL;
}

int
gnts_cli_attach(const char *kind, const struct gnts_cli_cfg *cfg,
		struct gnts_attach_req *req, struct gnts_attach_rsp *rsp,
		struct gnts_cli **out, char *err, size_t errlen)
{
	const struct gnts_cli_ops *ops = gnts_cli_backend(kind);
	struct gnts_cli *c;
	int rc;

	if (ops == NULL) {
		snprintf(err, errlen, "backend '%s' is not in this libxnv "
			 "(it has: %s)", kind, gnts_cli_kinds());
		return -ENOTSUP;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c->ops = ops;
	rc = ops->attach(cfg, req, rsp, &c->impl, err, errlen);
	if (rc < 0) {
		free(c);
		return rc;
	}
	*out = c;
	return 0;
}

int
gnts_cli_map(struct gnts_cli *c, gnts_ref_t ref, void **va, size_t *size,
	     char *err, size_t errlen)
{
	return c->ops->map(c->impl, ref, va, size, err, errlen);
}

void
gnts_cli_unmap(struct gnts_cli *c, void *va, size_t size)
{
	if (va != NULL)
		c->ops->unmap(c->impl, va, size);
}

int
gnts_cli_alive(struct gnts_cli *c, char *err, size_t errlen)
{
	return c->ops->alive(c->impl, err, errlen);
}

int
gnts_cli_gone_status(const struct gnts_cli *c)
{
	return c->ops->gone_status(c->impl);
}

unsigned
gnts_cli_flags(const struct gnts_cli *c)
{
	return c->ops->flags;
}

struct gnts_bell *
gnts_cli_bell(const struct gnts_cli *c)
{
	return c->ops->bell != NULL ? c->ops->bell(c->impl) : NULL;
}

int
gnts_cli_watch_fd(const struct gnts_cli *c)
{
	return c->ops->watch_fd != NULL ? c->ops->watch_fd(c->impl) : -1;
}

int
gnts_cli_device(const struct gnts_cli *c)
{
	return c->ops->device != NULL ? c->ops->device(c->impl) : -1;
}

void
gnts_cli_close(struct gnts_cli *c)
{
	if (c == NULL)
		return;
	c->ops->close(c->impl);
	free(c);
}
