/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Who may do what, as the config says (see config.h for the keys):
 *
 *   - who may attach (host mode): [group] allow_uids / allow_gids, by
 *     by default uid 0 (and the core's own uid: config.c); the same keys
 *     on a [service] narrow it further;
 *   - where an NF's own verdicts may send: [group] may_send_to, by
 *     default its own group only (chains are the operator's: always);
 *   - who may connect to the socket at all: [core] socket_mode and
 *     socket_group.
 *
 * config.c hands over each key's value; nothing here needs DPDK
 * (test_config_access runs it as is).  User and group names are looked
 * up once, when the config is loaded.
 */
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

#define SEP " \t,"
#define VALUE_MAX 256	/* longer than any value rte_cfgfile keeps */

/* A uid or gid: a decimal number, or a name looked up now.
 * 0, -ENOENT (no such name) or -EINVAL (not a number, or (id_t)-1). */
static int
parse_id(const char *tok, int users, uint32_t *id)
{
	unsigned long long x;
	char *end;

	if (isdigit((unsigned char)tok[0])) {
		errno = 0;
		x = strtoull(tok, &end, 10);
		if (errno != 0 || *end != '\0' || x >= UINT32_MAX)
			return -EINVAL;
		*id = (uint32_t)x;
		return 0;
	}
	if (users) {
		const struct passwd *pw = getpwnam(tok);

		if (pw == NULL)
			return -ENOENT;
		*id = (uint32_t)pw->pw_uid;
	} else {
		const struct group *gr = getgrnam(tok);

		if (gr == NULL)
			return -ENOENT;
		*id = (uint32_t)gr->gr_gid;
	}
	return 0;
}

/* The one line for a bad id @p tok in [@p sec] @p key = @p v. */
static int
bad_id(int rc, const char *sec, const char *key, const char *v,
       const char *tok, int users, char *err, size_t errlen)
{
	if (rc == -ENOENT)
		snprintf(err, errlen, "[%s] %s = %s: no such %s '%s'", sec,
			 key, v, users ? "user" : "group", tok);
	else
		snprintf(err, errlen, "[%s] %s = %s: '%s' is neither a %s "
			 "number nor a name", sec, key, v, tok,
			 users ? "user" : "group");
	return -EINVAL;
}

int
xnv_config_ids(const char *sec, const char *key, const char *v, int users,
	       struct xnv_ids *out, char *err, size_t errlen)
{
	char buf[VALUE_MAX], *save = NULL, *tok;
	struct xnv_ids ids = { 0 };
	int rc;

	snprintf(buf, sizeof(buf), "%s", v);
	for (tok = strtok_r(buf, SEP, &save); tok != NULL;
	     tok = strtok_r(NULL, SEP, &save)) {
		if (ids.n == XNV_MAX_IDS) {
			snprintf(err, errlen, "[%s] %s = %s: more than %d "
				 "entries", sec, key, v, XNV_MAX_IDS);
			return -EINVAL;
		}
		rc = parse_id(tok, users, &ids.id[ids.n]);
		if (rc < 0)
			return bad_id(rc, sec, key, v, tok, users, err, errlen);
		ids.n++;
	}
	*out = ids;
	return 0;
}

int
xnv_config_send_to(struct xnv_config *c, uint16_t from, const char *sec,
		   const char *v, char *err, size_t errlen)
{
	char buf[VALUE_MAX], *save = NULL, *tok;
	uint32_t mask = 0;
	int g;

	snprintf(buf, sizeof(buf), "%s", v);
	for (tok = strtok_r(buf, SEP, &save); tok != NULL;
	     tok = strtok_r(NULL, SEP, &save)) {
		g = xnv_config_group(c, tok);
		if (g < 0) {
			snprintf(err, errlen, "[%s] may_send_to = %s: no such "
				 "[group] '%s'", sec, v, tok);
			return -EINVAL;
		}
		mask |= 1u << g;
	}
	c->groups[from].may_send_to = mask;
	return 0;
}

int
xnv_config_socket_perm(struct xnv_config *c, const char *mode,
		       const char *group, char *err, size_t errlen)
{
	unsigned long m = XNV_SOCKET_MODE_DEFAULT;
	char *end = NULL;
	uint32_t gid = 0;
	int rc;

	if (mode != NULL) {
		m = strtoul(mode, &end, 8);
		/* The owner's rw stays: 0 means the default to the server
		 * (backend.h), and a socket its owner cannot use is a slip. */
		if (mode[0] < '0' || mode[0] > '7' || *end != '\0' ||
		    strlen(mode) > 4 || m > 0777 || (m & 0600) != 0600) {
			snprintf(err, errlen, "[core] socket_mode = %s: "
				 "expected an octal mode from 0600 to 0777, "
				 "such as 0660", mode);
			return -EINVAL;
		}
	}
	if (group != NULL) {
		rc = parse_id(group, 0, &gid);
		if (rc < 0)
			return bad_id(rc, "core", "socket_group", group, group,
				      0, err, errlen);
		/* Connecting takes write permission on the socket. */
		if (!(m & 0020)) {
			snprintf(err, errlen, "[core] socket_group = %s: "
				 "socket_mode %04lo does not let that group "
				 "connect (it needs write: 0660, say)", group,
				 m);
			return -EINVAL;
		}
	}
	c->socket_group_set = group != NULL;
	c->socket_gid = gid;
	c->socket_mode = (uint32_t)m;
	return 0;
}

static int
allows(const struct xnv_access *a, uint32_t uid, uint32_t gid)
{
	unsigned i;

	for (i = 0; i < a->uids.n; i++)
		if (a->uids.id[i] == uid)
			return 1;
	for (i = 0; i < a->gids.n; i++)
		if (a->gids.id[i] == gid)
			return 1;
	return 0;
}

int
xnv_config_may_join(const struct xnv_config *c, uint16_t g, uint16_t s,
		    uint32_t uid, uint32_t gid, char *err, size_t errlen)
{
	const struct xnv_access *sa = &c->services[s].access;

	if (!allows(&c->groups[g].access, uid, gid)) {
		snprintf(err, errlen, "uid %u (gid %u) may not join trust "
			 "group %s", uid, gid, c->groups[g].name);
		return -EACCES;
	}
	if (sa->set && !allows(sa, uid, gid)) {
		snprintf(err, errlen, "uid %u (gid %u) may not attach as "
			 "service %s", uid, gid, c->services[s].name);
		return -EACCES;
	}
	return 0;
}
