/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xnv-xl: start, stop and list NF domains.
 *
 *   xnv-xl create [--dry-run] [--timeout SEC] CFG [xl create args]
 *   xnv-xl destroy NAME
 *   xnv-xl list
 *   xnv-xl save | restore | migrate | register ...   (suspend.c)
 *
 * create: checks the config's nfv_* keys (nfv_cfg.c) before anything
 * starts, runs `xl create -p` (paused), registers the domain's NF devices
 * in XenStore (keys: include/gntshare/proto.h; protocol: xen.h), waits until xnv-core has accepted
 * them (service and group known), then unpauses.  Any failure destroys the
 * half-made domain.  xnv-core notices domains that die or are destroyed by
 * plain `xl destroy` through its @releaseDomain watch.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xenstore.h>

#include <gntshare/proto.h>
#include <gntshare/xen.h>

#include "nfdom.h"
#include "nfv_cfg.h"
#include "suspend.h"
#include "xl_run.h"
#include "xs_dev.h"

void
xnv_xl_usage(FILE *f)
{
	fprintf(f,
		"usage: xnv-xl create [--dry-run] [--timeout SEC] CFG [xl create args]\n"
		"       xnv-xl destroy NAME\n"
		"       xnv-xl list\n"
		"       xnv-xl save [--timeout SEC] [-c] NAME FILE\n"
		"       xnv-xl restore [--timeout SEC] FILE\n"
		"       xnv-xl migrate [--timeout SEC] [-s SSHCOMMAND] NAME HOST\n"
		"       xnv-xl register [--timeout SEC] NAME nfv_KEY=VALUE...\n"
		"create   check CFG's nfv_* keys, xl create -p, register the NF\n"
		"         devices with xnv-core (XenStore), wait for its answer,\n"
		"         unpause.  --dry-run checks and prints the plan only.\n"
		"         --timeout: seconds to wait for xnv-core (default 10).\n"
		"destroy  xl destroy NAME and remove its NF devices.\n"
		"list     NF domains: domid, name, service, group, device states.\n"
		"save     have xnv-core let NAME's NFs go (they unmap its grants\n"
		"         and wait), xl save [-c] NAME FILE, its NF devices into\n"
		"         FILE.nfv; --timeout: for the NFs too (default 10).\n"
		"restore  xl restore -p FILE, register FILE.nfv's devices, unpause:\n"
		"         the NFs attach again.\n"
		"migrate  as save, then xl migrate -p [-s SSHCOMMAND] NAME HOST and\n"
		"         xnv-xl register on HOST through SSHCOMMAND (default ssh);\n"
		"         HOST localhost without -s: no ssh, all in this Dom0.\n"
		"register register the NF devices of NAME, which exists paused\n"
		"         (migrated here), as create would, and unpause it.\n"
		"Keys: nfv_trust_group (required), nfv_service (required),\n"
		"      nfv_instances (1..%d, default 1), nfv_backend (the\n"
		"      driver domain xnv-core runs in; default Dom0).\n"
		"Env XNV_XL: the xl binary.\n"
		"--version: the version.  Exit status: 0, 2 for a usage error,\n"
		"1 for any other error.\n",
		NFV_MAX_INSTANCES);
}

/* create's options, up to CFG (what follows CFG is xl's).  Returns -1 and
 * sets optind to CFG's index, or the exit status to return now. */
static int
create_opts(int argc, char **argv, int *dry, double *timeout)
{
	static const struct option lo[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *e;
	int opt;

	optind = 1;
	opterr = 0;
	/* '+': stop at CFG, what follows is xl's */
	while ((opt = getopt_long(argc, argv, "+", lo, NULL)) != -1) {
		switch (opt) {
		case 'n': *dry = 1; break;
		case 't':
			*timeout = strtod(optarg, &e);
			if (e == optarg || *e != '\0' || *timeout <= 0) {
				ERR("--timeout %s: expected seconds > 0", optarg);
				return 2;
			}
			break;
		case 'h': xnv_xl_usage(stdout); return 0;
		default:
			ERR("create: unknown or incomplete option '%s' (see "
			    "--help)", argv[optind - 1]);
			return 2;
		}
	}
	if (optind >= argc) {
		ERR("create: no domain config given (see --help)");
		return 2;
	}
	return -1;
}

/* Read and check the nfv_* keys of @p path; 0 or -1 (message printed). */
static int
load_cfg(const char *path, struct nfv_cfg *c)
{
	char err[256], *data;
	size_t len;
	int rc;

	if (xl_read_file(path, &data, &len) < 0)
		return -1;
	rc = nfv_cfg_parse(path, data, len, stderr, c, err, sizeof(err));
	free(data);
	if (rc < 0) {
		ERR("%s; no domain created", err);
		return -1;
	}
	return 0;
}

/* `xl create -p CFG [xl args]` from @p argv[first..argc), NULL-terminated. */
static char **
xl_create_argv(int argc, char **argv, int first)
{
	char **xargv = calloc((size_t)(argc - first) + 4, sizeof(char *));
	int i;

	if (xargv == NULL)
		return NULL;
	xargv[0] = (char *)xl_bin;
	xargv[1] = "create";
	xargv[2] = "-p";
	for (i = first; i < argc; i++)
		xargv[3 + i - first] = argv[i];
	return xargv;
}

/* xl create's KEY=VALUE overrides after the config file: a `name=` is
 * the domain's final name, which every later step must use (the domain
 * is found, its devices named and its NFs called by it); nfv_* settings
 * are refused there (xl would not see them, xnv-xl would not either).
 * 0, or -1 said why. */
static int
apply_overrides(struct nfv_cfg *c, int argc, char **argv, int first)
{
	const char *v;
	size_t len;
	int i;

	for (i = first + 1; i < argc; i++) {
		if (strncmp(argv[i], "nfv_", 4) == 0) {
			ERR("%s: nfv_* settings go in the domain's config file, "
			    "not on the command line", argv[i]);
			return -1;
		}
		if (strncmp(argv[i], "name=", 5) != 0)
			continue;
		v = argv[i] + 5;
		len = strlen(v);
		if (len >= 2 && (v[0] == '"' || v[0] == '\'') &&
		    v[len - 1] == v[0]) {
			v++;
			len -= 2;
		}
		if (len == 0 || len >= sizeof(c->name)) {
			ERR("%s: expected a domain name of 1 to %zu characters",
			    argv[i], sizeof(c->name) - 1);
			return -1;
		}
		snprintf(c->name, sizeof(c->name), "%.*s", (int)len, v);
	}
	return 0;
}

/* --dry-run: the steps create would take, touching nothing. */
static void
print_plan(const struct nfv_cfg *c, char *const xargv[], double timeout)
{
	int i, n;

	printf("domain %s: service %s, trust group %s, %d NF device%s\n",
	       c->name, c->service, c->group, c->instances,
	       c->instances > 1 ? "s" : "");
	/* xl's KEY=VALUE arguments after CFG (xargv: xl create -p CFG ...)
	 * override the file's settings: say which, and what they change. */
	printf("overrides of %s on the command line:", xargv[3]);
	for (i = 4, n = 0; xargv[i] != NULL; i++)
		if (xargv[i][0] != '-' && strchr(xargv[i], '=') != NULL)
			printf("%s %s%s", n++ ? "," : "", xargv[i],
			       strncmp(xargv[i], "name=", 5) == 0 ?
			       " (the domain's name)" : "");
	printf("%s\n1. run:", n ? "" : " none");
	for (i = 0; xargv[i] != NULL; i++)
		printf(" %s", xargv[i]);
	printf("\n2. register /local/domain/%s/backend/xnv/<domid>/0..%d and "
	       "/local/domain/<domid>/%s/0..%d (state %s)\n",
	       c->backend[0] ? "<domid of nfv_backend>" : "0",
	       c->instances - 1, GNTS_XS_FRONTEND_DIR,
	       c->instances - 1, gnts_xb_state_str(GNTS_XB_INITIALISING));
	printf("3. wait up to %.0f s for xnv-core to accept them "
	       "(state 2)\n4. run: %s unpause <domid> (the domid of %s, "
	       "read once after step 1)\n", timeout, xl_bin, c->name);
}

/* xl create -p, register, wait, unpause.  Returns the exit status. */
static int
create_and_register(const struct nfv_cfg *c, char *const xargv[],
		    double timeout)
{
	struct xs_handle *xs;
	int rc, domid, bdom;

	xs = nfdom_open(c, &bdom);
	if (xs == NULL)
		return 1;
	rc = xl_run(xargv, NULL, 0);
	if (rc != 0) {
		ERR("xl create failed (exit %d)", rc);
		xs_close(xs);
		return 1;
	}
	domid = xl_domid(c->name);
	rc = nfdom_start(xs, c, domid, bdom, timeout, 0);
	xs_close(xs);
	if (rc < 0)
		return 1;
	printf("xnv-xl: domain %s (domid %d) started: service %s, trust group "
	       "%s, %d NF device%s\n", c->name, domid, c->service, c->group,
	       c->instances, c->instances > 1 ? "s" : "");
	return 0;
}

static int
cmd_create(int argc, char **argv)
{
	struct nfv_cfg c;
	double timeout = 10;
	char **xargv;
	int dry = 0, rc;

	rc = create_opts(argc, argv, &dry, &timeout);
	if (rc >= 0)
		return rc;
	if (load_cfg(argv[optind], &c) < 0)
		return 1;
	if (apply_overrides(&c, argc, argv, optind) < 0)
		return 2;	/* a bad command-line argument */
	xargv = xl_create_argv(argc, argv, optind);
	if (xargv == NULL)
		return 1;
	if (dry)
		print_plan(&c, xargv, timeout);
	rc = dry ? 0 : create_and_register(&c, xargv, timeout);
	free(xargv);
	return rc;
}

static int
cmd_destroy(int argc, char **argv)
{
	struct xs_handle *xs;
	int domid, bdom, rc;

	if (argc != 2) {
		ERR("destroy: expected exactly one domain name");
		return 2;
	}
	domid = xl_domid(argv[1]);
	if (domid < 0) {
		ERR("no domain named %s", argv[1]);
		return 1;
	}
	xs = xs_open(0);
	bdom = xs != NULL ? xs_dev_backend(xs, domid) : 0; /* gone after */
	rc = xl_simple("destroy", argv[1]);
	if (xs != NULL) {
		xs_dev_unregister(xs, domid, bdom);
		xs_close(xs);
	}
	if (rc != 0) {
		ERR("xl destroy %s failed (exit %d)", argv[1], rc);
		return 1;
	}
	printf("xnv-xl: domain %s (domid %d) destroyed\n", argv[1], domid);
	return 0;
}

/* One line per device of domain @p domid under backend domain @p bdom. */
static void
list_domain(struct xs_handle *xs, unsigned bdom, int domid)
{
	static const char *const st[] = { "unknown", "initialising",
		"initwait", "initialised", "connected", "closing", "closed" };
	char root[48], path[96], dom[48], be[128], fe[128];
	char **devs, *nm, *sv, *gr, *bs, *fs;
	unsigned nv = 0, j;
	int dev, b, f;

	snprintf(root, sizeof(root), GNTS_XS_BACKEND_ROOT_FMT, bdom);
	snprintf(path, sizeof(path), "%s/%d", root, domid);
	snprintf(dom, sizeof(dom), "/local/domain/%d", domid);
	devs = xs_directory(xs, XBT_NULL, path, &nv);
	for (j = 0; devs != NULL && j < nv; j++) {
		dev = atoi(devs[j]);
		snprintf(be, sizeof(be), "%s/%d", path, dev);
		snprintf(fe, sizeof(fe), "%s/%s/%d", dom, GNTS_XS_FRONTEND_DIR,
			 dev);
		nm = xs_dev_node(xs, dom, "name");
		sv = xs_dev_node(xs, be, GNTS_XS_SERVICE);
		gr = xs_dev_node(xs, be, GNTS_XS_TRUST_GROUP);
		bs = xs_dev_node(xs, be, GNTS_XS_STATE);
		fs = xs_dev_node(xs, fe, GNTS_XS_STATE);
		b = bs ? atoi(bs) : 0;
		f = fs ? atoi(fs) : 0;
		printf("%-6d %-16s %-4d %-12s %-12s %-12s %-12s %u\n", domid,
		       nm ? nm : "(gone)", dev, sv ? sv : "?", gr ? gr : "?",
		       st[b >= 0 && b <= 6 ? b : 0],
		       st[f >= 0 && f <= 6 ? f : 0], bdom);
		free(nm); free(sv); free(gr); free(bs); free(fs);
	}
	free(devs);
}

/* Every domain's NF devices, under whichever domain serves them (Dom0
 * or a driver domain: each domain's backend/xnv directory). */
static int
cmd_list(void)
{
	struct xs_handle *xs = xs_open(0);
	unsigned nb = 0, nd, i, k;
	char **bdoms, **doms, root[48];

	if (xs == NULL) {
		ERR("cannot connect to XenStore: %s (run in Dom0 as root)",
		    strerror(errno));
		return 1;
	}
	printf("%-6s %-16s %-4s %-12s %-12s %-12s %-12s %s\n", "domid",
	       "name", "dev", "service", "group", "backend", "frontend",
	       "backend-domid");
	bdoms = xs_directory(xs, XBT_NULL, "/local/domain", &nb);
	for (k = 0; bdoms != NULL && k < nb; k++) {
		unsigned bdom = (unsigned)atoi(bdoms[k]);

		snprintf(root, sizeof(root), GNTS_XS_BACKEND_ROOT_FMT, bdom);
		nd = 0;
		doms = xs_directory(xs, XBT_NULL, root, &nd);
		for (i = 0; doms != NULL && i < nd; i++)
			list_domain(xs, bdom, atoi(doms[i]));
		free(doms);
	}
	free(bdoms);
	xs_close(xs);
	return 0;
}

int
main(int argc, char **argv)
{
	int rc;

	if (getenv("XNV_XL") != NULL && getenv("XNV_XL")[0] != '\0')
		xl_bin = getenv("XNV_XL");
	if (argc < 2 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0) {
		xnv_xl_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("xnv-xl (XenNetVM) %s\n", XNV_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "create") == 0)
		return cmd_create(argc - 1, argv + 1);
	if (strcmp(argv[1], "destroy") == 0)
		return cmd_destroy(argc - 1, argv + 1);
	if (strcmp(argv[1], "list") == 0 && argc == 2)
		return cmd_list();
	rc = xnv_xl_suspend_cmd(argv[1], argc - 1, argv + 1);
	if (rc >= 0)
		return rc;
	ERR("unknown command '%s' (create, destroy, list, save, restore, "
	    "migrate, register; see --help)", argv[1]);
	return 2;
}
