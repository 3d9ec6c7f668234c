/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The server side's backend registry and handle (backend.h).  The core
 * calls these; only the table below names a backend.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends.h"

static const struct gnts_srv_ops *const backends[] = {
	&gnts_host_srv_ops,
#ifdef GNTS_HAVE_XEN
	&gnts_xen_srv_ops,
#endif
};

#define N_BACKENDS (sizeof(backends) / sizeof(backends[0]))

struct gnts_srv {
	const struct gnts_srv_ops *ops;
	void *impl;
};

const char *
gnts_srv_kinds(void)
{
	static char kinds[64];
	size_t i, o = 0;

	for (i = 0; i < N_BACKENDS && o < sizeof(kinds); i++)
		o += (size_t)snprintf(kinds + o, sizeof(kinds) - o, "%s%s",
				      i ? ", " : "", backends[i]->name);
	return kinds;
}

const struct gnts_srv_ops *
gnts_srv_backend(const char *kind)
{
	size_t i;

	for (i = 0; i < N_BACKENDS; i++)
		if (strcmp(backends[i]->name, kind) == 0)
			return backends[i];
	return NULL;
}

int
gnts_srv_open(const char *kind, const struct gnts_srv_cfg *cfg,
	      struct gnts_srv **out, char *err, size_t errlen)
{
	const struct gnts_srv_ops *ops;
	struct gnts_srv *s;
	int rc;

	if (kind == NULL)
		kind = "host";
	ops = gnts_srv_backend(kind);
	if (ops == NULL) {
		snprintf(err, errlen, "backend '%s' is unknown or not built in "
			 "(this build has: %s)", kind, gnts_srv_kinds());
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->ops = ops;
	rc = ops->open(cfg, &s->impl, err, errlen);
	if (rc < 0) {
		free(s);
		return rc;
	}
	*out = s;
	return 0;
}

int
gnts_srv_poll(struct gnts_srv *s)
{
	return s->ops->poll(s->impl);
}

void
gnts_srv_detach(struct gnts_srv *s, gnts_peer_t peer, int status,
		const char *why)
{
	s->ops->detach(s->impl, peer, status, why);
}

void
gnts_srv_close(struct gnts_srv *s)
{
	if (s == NULL)
		return;
	s->ops->close(s->impl);
	free(s);
}

const char *
gnts_srv_kind(const struct gnts_srv *s)
{
	return s->ops->name;
}

const char *
gnts_srv_attach_words(const struct gnts_srv *s, gnts_peer_t peer, pid_t pid,
		      char *buf, size_t len)
{
	s->ops->attach_words(peer, pid, buf, len);
	return buf;
}

const char *
gnts_srv_peer_words(const struct gnts_srv *s, gnts_peer_t peer, char *buf,
		    size_t len)
{
	s->ops->peer_words(peer, buf, len);
	return buf;
}

const char *
gnts_srv_death_words(const struct gnts_srv *s)
{
	return s->ops->death_words;
}

const char *
gnts_srv_where(const struct gnts_srv *s, char *buf, size_t len)
{
	s->ops->where(s->impl, buf, len);
	return buf;
}
